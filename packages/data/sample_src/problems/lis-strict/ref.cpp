#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<long long> tail;  // tail[k] = smallest end of an increasing subsequence of length k+1
    for (int i = 0; i < n; i++) {
        long long x;
        std::scanf("%lld", &x);
        auto it = std::lower_bound(tail.begin(), tail.end(), x);
        if (it == tail.end()) tail.push_back(x); else *it = x;
    }
    std::printf("%zu\n", tail.size());
}
