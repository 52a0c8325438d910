#include <bits/stdc++.h>
int main() {
    int n;
    std::cin >> n;
    int count = 0;
    for (int v = 1; v <= n; ++v) {
        int m = v, primes = 0;
        for (int d = 2; d * d <= m; ++d)
            if (m % d == 0) {
                ++primes;
                while (m % d == 0) m /= d;
            }
        if (m > 1) ++primes;
        if (primes == 2) ++count;
    }
    std::cout << count << "\n";
}
