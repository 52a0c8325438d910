#include <bits/stdc++.h>
int n;
std::vector<long long> mx, lz;
void build(int v, int l, int r, const std::vector<long long>& h) {
    if (l == r) { mx[v] = h[l]; return; }
    int m = (l + r) / 2;
    build(2 * v, l, m, h);
    build(2 * v + 1, m + 1, r, h);
    mx[v] = std::max(mx[2 * v], mx[2 * v + 1]);
}
void add(int v, int l, int r, int a, int b, long long x) {
    if (b < l || r < a) return;
    if (a <= l && r <= b) { mx[v] += x; lz[v] += x; return; }
    int m = (l + r) / 2;
    add(2 * v, l, m, a, b, x);
    add(2 * v + 1, m + 1, r, a, b, x);
    mx[v] = std::max(mx[2 * v], mx[2 * v + 1]) + lz[v];
}
long long query(int v, int l, int r, int a, int b) {
    if (b < l || r < a) return LLONG_MIN;
    if (a <= l && r <= b) return mx[v];
    int m = (l + r) / 2;
    return std::max(query(2 * v, l, m, a, b), query(2 * v + 1, m + 1, r, a, b)) + lz[v];
}
int main() {
    int q;
    std::scanf("%d %d", &n, &q);
    std::vector<long long> h(n);
    for (auto& x : h) std::scanf("%lld", &x);
    mx.assign(4 * n, 0);
    lz.assign(4 * n, 0);
    build(1, 0, n - 1, h);
    while (q--) {
        int type, l, r;
        std::scanf("%d %d %d", &type, &l, &r);
        if (type == 1) {
            long long x;
            std::scanf("%lld", &x);
            add(1, 0, n - 1, l - 1, r - 1, x);
        } else {
            std::printf("%lld\n", query(1, 0, n - 1, l - 1, r - 1));
        }
    }
}
