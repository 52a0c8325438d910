// Orders tasks by their number of prerequisites; wrong for chains and never detects cycles.
#include <bits/stdc++.h>
int main() {
    int n, m;
    std::scanf("%d %d", &n, &m);
    std::vector<int> indeg(n + 1, 0), order(n);
    for (int i = 0; i < m; i++) {
        int a, b;
        std::scanf("%d %d", &a, &b);
        indeg[b]++;
    }
    std::iota(order.begin(), order.end(), 1);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return indeg[a] < indeg[b]; });
    for (int i = 0; i < n; i++) std::printf("%d%c", order[i], i + 1 == n ? '\n' : ' ');
}
