#include <bits/stdc++.h>
std::vector<int> parent;
int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}
int main() {
    int n, m;
    std::scanf("%d %d", &n, &m);
    std::vector<std::tuple<long long, int, int>> e(m);
    for (auto& [c, u, v] : e) std::scanf("%d %d %lld", &u, &v, &c);
    std::sort(e.begin(), e.end());
    parent.resize(n + 1);
    std::iota(parent.begin(), parent.end(), 0);
    long long total = 0;
    for (auto& [c, u, v] : e) {
        int a = find(u), b = find(v);
        if (a != b) { parent[a] = b; total += c; }
    }
    std::printf("%lld\n", total);
}
