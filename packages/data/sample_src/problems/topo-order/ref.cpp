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
    std::priority_queue<int, std::vector<int>, std::greater<int>> q;  // smallest ready task first
    for (int v = 1; v <= n; v++) if (!indeg[v]) q.push(v);
    std::vector<int> order;
    while (!q.empty()) {
        int v = q.top();
        q.pop();
        order.push_back(v);
        for (int u : adj[v]) if (--indeg[u] == 0) q.push(u);
    }
    if ((int)order.size() < n) { std::puts("-1"); return 0; }
    for (int i = 0; i < n; i++) std::printf("%d%c", order[i], i + 1 == n ? '\n' : ' ');
}
