// Correct answers, but tries every starting day: O(n^2), too slow for n = 100 000.
#include <bits/stdc++.h>
int main() {
    int n;
    scanf("%d", &n);
    std::vector<long long> a(n);
    for (auto& x : a) scanf("%lld", &x);
    long long best = LLONG_MIN;
    for (int i = 0; i < n; i++) {
        long long s = 0;
        for (int j = i; j < n; j++) {
            s += a[j];
            if (s > best) best = s;
        }
    }
    printf("%lld\n", best);
}
