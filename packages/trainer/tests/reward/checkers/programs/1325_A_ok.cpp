#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        long long x; std::cin >> x;
        if (x % 2 == 0) std::cout << x / 2 << " " << x / 2 << "\n";
        else std::cout << x - 1 << " " << 1 << "\n";
    }
}
