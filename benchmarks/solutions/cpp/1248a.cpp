#include <bits/stdc++.h>
int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        long long n, m, odd_p = 0, odd_q = 0;
        scanf("%lld", &n);
        for (long long i = 0, v; i < n; ++i) scanf("%lld", &v), odd_p += v % 2;
        scanf("%lld", &m);
        for (long long i = 0, v; i < m; ++i) scanf("%lld", &v), odd_q += v % 2;
        printf("%lld\n", odd_p * odd_q + (n - odd_p) * (m - odd_q));
    }
}
