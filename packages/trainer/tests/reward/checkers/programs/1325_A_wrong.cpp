#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        long long x; std::cin >> x;
        std::cout << 1 << " " << x << "\n";  // gcd + lcm = x + 1
    }
}
