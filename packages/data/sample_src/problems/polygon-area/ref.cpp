#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<long long> x(n), y(n);
    for (int i = 0; i < n; i++) std::scanf("%lld %lld", &x[i], &y[i]);
    long long twice = 0;  // shoelace formula, exact in 64-bit
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        twice += x[i] * y[j] - x[j] * y[i];
    }
    twice = std::llabs(twice);
    std::printf("%lld.%d\n", twice / 2, twice % 2 ? 5 : 0);
}
