#include <bits/stdc++.h>
int main() {
    int n;
    std::cin >> n;
    bool yes = false;
    for (int v = 1; v <= 1000; ++v) {
        std::string s = std::to_string(v);
        if (s.find_first_not_of("47") == std::string::npos && n % v == 0) yes = true;
    }
    std::cout << (yes ? "YES" : "NO") << "\n";
}
