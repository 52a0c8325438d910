#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        long long l, r; std::cin >> l >> r;
        std::cout << l << " " << std::min(r, 2 * l + 1) << "\n";  // 2l+1 is no multiple of l > 1
    }
}
