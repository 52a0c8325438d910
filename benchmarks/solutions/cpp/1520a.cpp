#include <bits/stdc++.h>
int main() {
    int t;
    std::cin >> t;
    while (t--) {
        int n;
        std::string s;
        std::cin >> n >> s;
        std::set<char> seen;
        bool ok = true;
        for (size_t i = 0; i < s.size(); ++i) {
            if (seen.count(s[i]) && s[i - 1] != s[i]) ok = false;
            seen.insert(s[i]);
        }
        std::cout << (ok ? "YES" : "NO") << "\n";
    }
}
