#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        int n; std::cin >> n;
        std::vector<int> p(n + 1);
        int start = 1;
        if (n % 2 == 1) {  // the 3-cycle first, not last
            p[1] = 3; p[2] = 1; p[3] = 2; start = 4;
        }
        for (int i = start; i + 1 <= n; i += 2) { p[i] = i + 1; p[i + 1] = i; }
        for (int i = 1; i <= n; i++) std::cout << p[i] << " \n"[i == n];
    }
}
