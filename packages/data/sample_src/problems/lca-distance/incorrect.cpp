// Binary lifting with too few levels (LOG = 10): wrong once the tree is deeper than 1023.
#include <bits/stdc++.h>
const int LOG = 10;
int main() {
    int n, q;
    std::scanf("%d %d", &n, &q);
    std::vector<std::array<int, LOG>> up(n + 1);
    std::vector<std::vector<int>> ch(n + 1);
    up[1].fill(1);
    for (int i = 2; i <= n; i++) {
        std::scanf("%d", &up[i][0]);
        ch[up[i][0]].push_back(i);
    }
    std::vector<int> depth(n + 1, 0), order = {1};
    for (size_t h = 0; h < order.size(); h++)
        for (int c : ch[order[h]]) { depth[c] = depth[order[h]] + 1; order.push_back(c); }
    for (int v : order)
        for (int k = 1; k < LOG; k++) up[v][k] = up[up[v][k - 1]][k - 1];
    while (q--) {
        int u, v;
        std::scanf("%d %d", &u, &v);
        int a = u, b = v;
        if (depth[a] < depth[b]) std::swap(a, b);
        for (int k = LOG - 1; k >= 0; k--)
            if (depth[a] - (1 << k) >= depth[b]) a = up[a][k];
        if (a != b) {
            for (int k = LOG - 1; k >= 0; k--)
                if (up[a][k] != up[b][k]) { a = up[a][k]; b = up[b][k]; }
            a = up[a][0];
        }
        std::printf("%d\n", depth[u] + depth[v] - 2 * depth[a]);
    }
}
