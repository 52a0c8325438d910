#include <bits/stdc++.h>
int main() {
    int n;
    std::string s;
    std::cin >> n >> s;
    int a = 0, b = 0;  // mismatches against 0101... and 1010...
    for (int i = 0; i < n; i++) {
        char want = (i % 2 == 0) ? '0' : '1';
        if (s[i] != want) a++; else b++;
    }
    std::cout << std::min(a, b) << "\n";
}
