#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    long long first = -1, second = -1;
    for (int i = 0; i < n; i++) {
        long long x;
        std::scanf("%lld", &x);
        if (x > first) { second = first; first = x; }
        else if (x < first && x > second) second = x;
    }
    std::printf("%lld\n", second);
}
