#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<long long> a(n);
    for (auto& x : a) std::scanf("%lld", &x);
    std::vector<long long> vals(a);
    std::sort(vals.begin(), vals.end());
    vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
    int k = vals.size();
    std::vector<int> bit(k + 1, 0);
    long long inv = 0;
    for (int i = n - 1; i >= 0; i--) {  // count smaller values to the right
        int r = std::lower_bound(vals.begin(), vals.end(), a[i]) - vals.begin();
        for (int j = r; j > 0; j -= j & -j) inv += bit[j];
        for (int j = r + 1; j <= k; j += j & -j) bit[j]++;
    }
    std::printf("%lld\n", inv);
}
