#include <bits/stdc++.h>
using namespace std;
// Shortest path from S to T on a grid with walls.
int main() {
    int h, w;
    cin >> h >> w;
    vector<string> g(h);
    for (auto& row : g) cin >> row;
    pair<int, int> s{}, t{};
    for (int i = 0; i < h; ++i)
        for (int j = 0; j < w; ++j) {
            if (g[i][j] == 'S') s = {i, j};
            if (g[i][j] == 'T') t = {i, j};
        }
    vector<vector<int>> dist(h, vector<int>(w, -1));
    queue<pair<int, int>> bfs;
    dist[s.first][s.second] = 0;
    bfs.push(s);
    const int dx[] = {1, -1, 0, 0}, dy[] = {0, 0, 1, -1};
    while (!bfs.empty()) {
        auto [x, y] = bfs.front();
        bfs.pop();
        for (int d = 0; d < 4; ++d) {
            int nx = x + dx[d], ny = y + dy[d];
            if (nx < 0 || ny < 0 || nx >= h || ny >= w || g[nx][ny] == '#' || dist[nx][ny] != -1) continue;
            dist[nx][ny] = dist[x][y] + 1;
            bfs.push({nx, ny});
        }
    }
    cout << dist[t.first][t.second] << endl;
}
