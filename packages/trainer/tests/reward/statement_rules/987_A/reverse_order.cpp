#include <bits/stdc++.h>
int main() {
    std::map<std::string, std::string> gem = {{"purple", "Power"}, {"green", "Time"},
        {"blue", "Space"}, {"orange", "Soul"}, {"red", "Reality"}, {"yellow", "Mind"}};
    int n; std::cin >> n;
    for (int i = 0; i < n; i++) { std::string c; std::cin >> c; gem.erase(c); }
    std::cout << gem.size() << "\n";
    for (auto it = gem.rbegin(); it != gem.rend(); ++it) std::cout << it->second << "\n";
}
