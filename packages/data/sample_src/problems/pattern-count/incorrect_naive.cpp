// Compares the pattern letter by letter at every position: O(|s| * |p|).
#include <bits/stdc++.h>
int main() {
    std::string s, p;
    std::cin >> s >> p;
    long long cnt = 0;
    for (size_t i = 0; i + p.size() <= s.size(); i++) {
        size_t j = 0;
        while (j < p.size() && s[i + j] == p[j]) j++;
        if (j == p.size()) cnt++;
    }
    std::cout << cnt << "\n";
}
