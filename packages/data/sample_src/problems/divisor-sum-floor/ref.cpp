#include <cstdio>
int main() {
    long long n;
    std::scanf("%lld", &n);
    long long s = 0;
    for (long long i = 1; i <= n;) {
        long long q = n / i, last = n / q;  // floor(n/j) == q for j in [i, last]
        s += q * (last - i + 1);
        i = last + 1;
    }
    std::printf("%lld\n", s);
}
