// Also accepted: Kahn's algorithm with a FIFO queue (a different valid order).
#include <bits/stdc++.h>
int main() {
    int n, m;
    std::scanf("%d %d", &n, &m);
    std::vector<std::vector<int>> adj(n + 1);
    std::vector<int> indeg(n + 1, 0);
    for (int i = 0; i < m; i++) {
        int a, b;
        std::scanf("%d %d", &a, &b);
        adj[a].push_back(b);
        indeg[b]++;
    }
    std::vector<int> order;
    for (int v = n; v >= 1; v--) if (!indeg[v]) order.push_back(v);
    for (size_t h = 0; h < order.size(); h++)
        for (int u : adj[order[h]]) if (--indeg[u] == 0) order.push_back(u);
    if ((int)order.size() < n) { std::puts("-1"); return 0; }
    for (int i = 0; i < n; i++) std::printf("%d%c", order[i], i + 1 == n ? '\n' : ' ');
}
