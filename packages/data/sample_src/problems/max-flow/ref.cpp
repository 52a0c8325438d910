#include <bits/stdc++.h>
typedef long long ll;
struct E { int to; ll cap; };
std::vector<E> es;
std::vector<std::vector<int>> g;
std::vector<int> level, it;
bool bfs(int s, int t) {
    level.assign(g.size(), -1);
    std::queue<int> q;
    level[s] = 0;
    q.push(s);
    while (!q.empty()) {
        int v = q.front();
        q.pop();
        for (int id : g[v])
            if (es[id].cap > 0 && level[es[id].to] < 0) { level[es[id].to] = level[v] + 1; q.push(es[id].to); }
    }
    return level[t] >= 0;
}
ll dfs(int v, int t, ll f) {
    if (v == t) return f;
    for (int& i = it[v]; i < (int)g[v].size(); i++) {
        int id = g[v][i];
        E& e = es[id];
        if (e.cap > 0 && level[e.to] == level[v] + 1) {
            ll got = dfs(e.to, t, std::min(f, e.cap));
            if (got > 0) { e.cap -= got; es[id ^ 1].cap += got; return got; }
        }
    }
    return 0;
}
int main() {
    int n, m;
    std::scanf("%d %d", &n, &m);
    g.assign(n + 1, {});
    for (int i = 0; i < m; i++) {
        int u, v;
        ll c;
        std::scanf("%d %d %lld", &u, &v, &c);
        g[u].push_back(es.size()); es.push_back({v, c});
        g[v].push_back(es.size()); es.push_back({u, 0});
    }
    ll flow = 0;
    while (bfs(1, n)) {  // Dinic
        it.assign(n + 1, 0);
        while (ll f = dfs(1, n, LLONG_MAX)) flow += f;
    }
    std::printf("%lld\n", flow);
}
