// Kadane's algorithm that allows the empty block: prints 0 when every day is a loss.
#include <bits/stdc++.h>
int main() {
    int n;
    scanf("%d", &n);
    long long best = 0, cur = 0;
    for (int i = 0; i < n; i++) {
        long long x;
        scanf("%lld", &x);
        cur = std::max(0LL, cur + x);
        best = std::max(best, cur);
    }
    printf("%lld\n", best);
}
