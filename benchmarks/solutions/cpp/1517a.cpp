#include <bits/stdc++.h>
int main() {
    int t;
    std::cin >> t;
    while (t--) {
        long long n;
        std::cin >> n;
        if (n % 2050) {
            std::cout << -1 << "\n";
            continue;
        }
        int digits = 0;
        for (long long q = n / 2050; q; q /= 10) digits += q % 10;
        std::cout << digits << "\n";
    }
}
