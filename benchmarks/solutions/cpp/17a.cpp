#include <bits/stdc++.h>
int main() {
    int n, k;
    std::cin >> n >> k;
    std::vector<bool> is_prime(n + 1, true);
    is_prime[0] = is_prime[1] = false;
    for (int i = 2; i <= n; ++i)
        if (is_prime[i])
            for (long long j = (long long)i * i; j <= n; j += i) is_prime[j] = false;
    std::vector<int> primes;
    for (int p = 2; p <= n; ++p)
        if (is_prime[p]) primes.push_back(p);
    int count = 0;
    for (size_t i = 0; i + 1 < primes.size(); ++i) {
        int s = primes[i] + primes[i + 1] + 1;
        if (s <= n && is_prime[s]) ++count;
    }
    std::cout << (count >= k ? "YES" : "NO") << "\n";
}
