// Augments along paths greedily but has no reverse edges, so it cannot undo a bad choice.
#include <bits/stdc++.h>
typedef long long ll;
int main() {
    int n, m;
    std::scanf("%d %d", &n, &m);
    std::vector<int> from(m), to(m);
    std::vector<ll> cap(m);
    std::vector<std::vector<int>> g(n + 1);
    for (int i = 0; i < m; i++) {
        std::scanf("%d %d %lld", &from[i], &to[i], &cap[i]);
        g[from[i]].push_back(i);
    }
    ll flow = 0;
    while (true) {
        std::vector<int> via(n + 1, -1);
        std::vector<bool> seen(n + 1, false);
        std::vector<int> st = {1};
        seen[1] = true;
        while (!st.empty()) {  // DFS for any path with spare capacity
            int v = st.back();
            st.pop_back();
            for (int id : g[v])
                if (cap[id] > 0 && !seen[to[id]]) { seen[to[id]] = true; via[to[id]] = id; st.push_back(to[id]); }
        }
        if (!seen[n]) break;
        ll f = LLONG_MAX;
        for (int v = n; v != 1; v = from[via[v]]) f = std::min(f, cap[via[v]]);
        for (int v = n; v != 1; v = from[via[v]]) cap[via[v]] -= f;
        flow += f;
    }
    std::printf("%lld\n", flow);
}
