#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        int n; std::cin >> n;
        for (int i = 1; i <= n; i++) std::cout << 2 << " \n"[i == n];  // 2 + 2 = 4 is absent
    }
}
