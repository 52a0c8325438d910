#include <cstdio>
typedef unsigned long long u64;
const u64 MOD = 1000000007ULL;
// Fast doubling: returns (F(n), F(n+1)).
void fib(u64 n, u64& a, u64& b) {
    if (n == 0) { a = 0; b = 1; return; }
    u64 x, y;
    fib(n >> 1, x, y);
    u64 c = x * ((2 * y + MOD - x) % MOD) % MOD;  // F(2k)
    u64 d = (x * x + y * y) % MOD;                // F(2k+1)
    if (n & 1) { a = d; b = (c + d) % MOD; } else { a = c; b = d; }
}
int main() {
    int t;
    std::scanf("%d", &t);
    while (t--) {
        u64 n, a, b;
        std::scanf("%llu", &n);
        fib(n, a, b);
        std::printf("%llu\n", a);
    }
}
