// Only tries the pattern that starts with 0.
#include <bits/stdc++.h>
int main() {
    int n;
    std::string s;
    std::cin >> n >> s;
    int a = 0;
    for (int i = 0; i < n; i++) {
        char want = (i % 2 == 0) ? '0' : '1';
        if (s[i] != want) a++;
    }
    std::cout << a << "\n";
}
