// Also moves diagonally (8 neighbours), which the statement forbids.
#include <bits/stdc++.h>
int main() {
    int n, m;
    std::cin >> n >> m;
    std::vector<std::string> g(n);
    for (auto& r : g) std::cin >> r;
    std::vector<int> dist(n * m, -1);
    std::deque<int> q;
    int target = -1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            if (g[i][j] == 'S') { dist[i * m + j] = 0; q.push_back(i * m + j); }
            if (g[i][j] == 'T') target = i * m + j;
        }
    while (!q.empty()) {
        int v = q.front();
        q.pop_front();
        int r = v / m, c = v % m;
        for (int dr = -1; dr <= 1; dr++)
            for (int dc = -1; dc <= 1; dc++) {
                int nr = r + dr, nc = c + dc;
                if (nr < 0 || nc < 0 || nr >= n || nc >= m || g[nr][nc] == '#') continue;
                int u = nr * m + nc;
                if (dist[u] < 0) { dist[u] = dist[v] + 1; q.push_back(u); }
            }
    }
    std::cout << dist[target] << "\n";
}
