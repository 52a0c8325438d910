// Greedy: always drives to the nearest unvisited point.
#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<std::vector<long long>> d(n, std::vector<long long>(n));
    for (auto& row : d) for (auto& x : row) std::scanf("%lld", &x);
    std::vector<bool> seen(n, false);
    seen[0] = true;
    int cur = 0;
    long long total = 0;
    for (int step = 1; step < n; step++) {
        int nxt = -1;
        for (int u = 0; u < n; u++)
            if (!seen[u] && (nxt < 0 || d[cur][u] < d[cur][nxt])) nxt = u;
        total += d[cur][nxt];
        seen[nxt] = true;
        cur = nxt;
    }
    std::printf("%lld\n", total + d[cur][0]);
}
