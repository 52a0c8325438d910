#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        int n; std::cin >> n;
        // swaps neighbours; for odd n the last one stays in place
        for (int i = 1; i <= n; i++) {
            int v = i % 2 == 1 ? (i + 1 <= n ? i + 1 : i) : i - 1;
            std::cout << v << " \n"[i == n];
        }
    }
}
