#include <bits/stdc++.h>
int main() {
    int q; std::cin >> q;
    while (q--) {
        long long l1, r1, l2, r2; std::cin >> l1 >> r1 >> l2 >> r2;
        std::cout << r1 << " " << (l2 != r1 ? l2 : r2) << "\n";
    }
}
