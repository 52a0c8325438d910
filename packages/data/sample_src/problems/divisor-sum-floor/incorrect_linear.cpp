// Correct but O(n): times out for n near 10^12.
#include <cstdio>
int main() {
    long long n;
    std::scanf("%lld", &n);
    long long s = 0;
    for (long long i = 1; i <= n; i++) s += n / i;
    std::printf("%lld\n", s);
}
