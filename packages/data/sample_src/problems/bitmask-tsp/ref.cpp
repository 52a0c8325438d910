#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<std::vector<long long>> d(n, std::vector<long long>(n));
    for (auto& row : d) for (auto& x : row) std::scanf("%lld", &x);
    const long long INF = LLONG_MAX / 4;
    // dp[mask][v]: shortest path from 0 visiting exactly mask (which contains 0 and v), ending at v
    std::vector<std::vector<long long>> dp(1 << n, std::vector<long long>(n, INF));
    dp[1][0] = 0;
    for (int mask = 1; mask < (1 << n); mask += 2)
        for (int v = 0; v < n; v++) {
            if (dp[mask][v] >= INF) continue;
            for (int u = 0; u < n; u++)
                if (!(mask >> u & 1))
                    dp[mask | 1 << u][u] = std::min(dp[mask | 1 << u][u], dp[mask][v] + d[v][u]);
        }
    long long best = INF;
    for (int v = 1; v < n; v++) best = std::min(best, dp[(1 << n) - 1][v] + d[v][0]);
    std::printf("%lld\n", best);
}
