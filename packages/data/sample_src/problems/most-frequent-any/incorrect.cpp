// Prints the largest book number instead of a most borrowed one.
#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    long long best = 0;
    for (int i = 0; i < n; i++) {
        long long x;
        std::scanf("%lld", &x);
        best = std::max(best, x);
    }
    std::printf("%lld\n", best);
}
