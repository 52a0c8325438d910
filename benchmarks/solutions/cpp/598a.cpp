#include <bits/stdc++.h>
int main() {
    int t;
    std::cin >> t;
    while (t--) {
        long long n;
        std::cin >> n;
        long long total = n * (n + 1) / 2;
        for (long long power = 1; power <= n; power *= 2) total -= 2 * power;
        std::cout << total << "\n";
    }
}
