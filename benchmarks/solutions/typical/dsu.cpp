#include <bits/stdc++.h>
using namespace std;
// Number of connected components after unions (disjoint set union).
struct DSU {
    vector<int> parent, size;
    explicit DSU(int n) : parent(n), size(n, 1) { iota(parent.begin(), parent.end(), 0); }
    int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }
    bool unite(int a, int b) {
        a = find(a), b = find(b);
        if (a == b) return false;
        if (size[a] < size[b]) swap(a, b);
        parent[b] = a;
        size[a] += size[b];
        return true;
    }
};
int main() {
    int n, m;
    cin >> n >> m;
    DSU dsu(n + 1);
    int components = n;
    for (int i = 0; i < m; ++i) {
        int a, b;
        cin >> a >> b;
        if (dsu.unite(a, b)) --components;
    }
    cout << components << endl;
}
