// Uses upper_bound: computes the longest non-decreasing subsequence instead.
#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<long long> tail;
    for (int i = 0; i < n; i++) {
        long long x;
        std::scanf("%lld", &x);
        auto it = std::upper_bound(tail.begin(), tail.end(), x);
        if (it == tail.end()) tail.push_back(x); else *it = x;
    }
    std::printf("%zu\n", tail.size());
}
