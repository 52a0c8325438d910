#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        long long l, r; std::cin >> l >> r;
        if (3 * l <= r) std::cout << l << " " << 3 * l << "\n";
        else std::cout << l << " " << 2 * l << "\n";
    }
}
