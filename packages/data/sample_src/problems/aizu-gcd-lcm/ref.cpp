#include <cstdio>
long long gcd(long long a, long long b) { return b ? gcd(b, a % b) : a; }
int main() {
    long long a, b;
    while (std::scanf("%lld %lld", &a, &b) == 2) {
        long long g = gcd(a, b);
        std::printf("%lld %lld\n", g, a / g * b);
    }
}
