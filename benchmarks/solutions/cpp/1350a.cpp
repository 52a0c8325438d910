#include <bits/stdc++.h>
int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        long long n, k;
        scanf("%lld %lld", &n, &k);
        long long f = n;
        for (long long d = 2; d * d <= n; ++d)
            if (n % d == 0) {
                f = d;
                break;
            }
        printf("%lld\n", n + f + 2 * (k - 1));
    }
}
