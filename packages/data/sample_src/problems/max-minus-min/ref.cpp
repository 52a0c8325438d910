#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    long long lo = LLONG_MAX, hi = LLONG_MIN;
    for (int i = 0; i < n; i++) {
        long long x;
        std::scanf("%lld", &x);
        lo = std::min(lo, x);
        hi = std::max(hi, x);
    }
    std::printf("%lld\n", hi - lo);
}
