// Correct values, but O(n) per query: times out for n near 10^18.
#include <cstdio>
int main() {
    const unsigned long long MOD = 1000000007ULL;
    int t;
    std::scanf("%d", &t);
    while (t--) {
        unsigned long long n, a = 0, b = 1;
        std::scanf("%llu", &n);
        for (unsigned long long i = 0; i < n; i++) {
            unsigned long long c = (a + b) % MOD;
            a = b;
            b = c;
        }
        std::printf("%llu\n", a);
    }
}
