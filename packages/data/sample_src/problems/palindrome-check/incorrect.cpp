// Only compares the first and the last letter.
#include <bits/stdc++.h>
int main() {
    int t;
    std::cin >> t;
    while (t--) {
        std::string s;
        std::cin >> s;
        std::cout << (s.front() == s.back() ? "YES" : "NO") << "\n";
    }
}
