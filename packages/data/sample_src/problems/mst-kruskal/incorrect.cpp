// Takes the n-1 cheapest cables without checking that they form a tree.
#include <bits/stdc++.h>
int main() {
    int n, m;
    std::scanf("%d %d", &n, &m);
    std::vector<long long> c(m);
    for (auto& x : c) {
        int u, v;
        std::scanf("%d %d %lld", &u, &v, &x);
    }
    std::sort(c.begin(), c.end());
    long long total = 0;
    for (int i = 0; i < n - 1; i++) total += c[i];
    std::printf("%lld\n", total);
}
