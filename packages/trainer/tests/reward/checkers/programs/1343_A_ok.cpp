#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        long long n; std::cin >> n;
        long long best = -1;
        for (int k = 2; k < 31; k++) {  // the largest k: another answer than the smallest
            long long d = (1LL << k) - 1;
            if (n % d == 0) best = n / d;
        }
        std::cout << best << "\n";
    }
}
