#include <cstdio>
int main() {
    const long long bills[] = {100, 50, 20, 10, 5, 2, 1};
    int t;
    std::scanf("%d", &t);
    while (t--) {
        long long n, c = 0;
        std::scanf("%lld", &n);
        for (long long b : bills) { c += n / b; n %= b; }
        std::printf("%lld\n", c);
    }
}
