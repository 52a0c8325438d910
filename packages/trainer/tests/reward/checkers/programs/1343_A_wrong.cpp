#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        long long n; std::cin >> n;
        std::cout << std::max(1LL, n / 3) << "\n";  // right only when 3 divides n
    }
}
