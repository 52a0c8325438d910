#include <bits/stdc++.h>
int main() {
    int y;
    std::cin >> y;
    for (++y;; ++y) {
        std::string s = std::to_string(y);
        if (std::set<char>(s.begin(), s.end()).size() == 4) break;
    }
    std::cout << y << "\n";
}
