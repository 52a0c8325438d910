#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        int n; std::cin >> n;
        for (int i = 1; i <= n; i++) std::cout << (i == n && n > 1 ? 2 : 1) << " \n"[i == n];  // 1 + 1 = 2
    }
}
