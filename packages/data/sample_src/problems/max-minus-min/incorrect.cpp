// Starts the maximum at 0, so an all-negative day gives a wrong range.
#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    long long lo = LLONG_MAX, hi = 0;
    for (int i = 0; i < n; i++) {
        long long x;
        std::scanf("%lld", &x);
        lo = std::min(lo, x);
        hi = std::max(hi, x);
    }
    std::printf("%lld\n", hi - lo);
}
