// Uses the 32-bit popcount, losing the high bits.
#include <cstdio>
int main() {
    unsigned long long n;
    std::scanf("%llu", &n);
    std::printf("%d\n", __builtin_popcount((unsigned)n));
}
