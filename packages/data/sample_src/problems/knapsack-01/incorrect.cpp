// Iterates capacities upwards, which lets an item be taken many times.
#include <bits/stdc++.h>
int main() {
    int n, W;
    std::scanf("%d %d", &n, &W);
    std::vector<long long> best(W + 1, 0);
    for (int i = 0; i < n; i++) {
        int w;
        long long v;
        std::scanf("%d %lld", &w, &v);
        for (int c = w; c <= W; c++) best[c] = std::max(best[c], best[c - w] + v);
    }
    std::printf("%lld\n", best[W]);
}
