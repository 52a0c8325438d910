// Builds the hull correctly but forgets the closing edge back to the first vertex.
#include <bits/stdc++.h>
typedef long long ll;
typedef std::pair<ll, ll> P;
ll cross(P o, P a, P b) { return (a.first - o.first) * (b.second - o.second) - (a.second - o.second) * (b.first - o.first); }
int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<P> p(n);
    for (auto& [x, y] : p) std::scanf("%lld %lld", &x, &y);
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    n = p.size();
    if (n == 1) { std::puts("0.000000000"); return 0; }
    std::vector<P> h(2 * n);
    int k = 0;
    for (int i = 0; i < n; i++) {
        while (k >= 2 && cross(h[k - 2], h[k - 1], p[i]) <= 0) k--;
        h[k++] = p[i];
    }
    for (int i = n - 2, lo = k + 1; i >= 0; i--) {
        while (k >= lo && cross(h[k - 2], h[k - 1], p[i]) <= 0) k--;
        h[k++] = p[i];
    }
    double per = 0;
    for (int i = 0; i + 2 < k; i++)
        per += std::hypot((double)(h[i + 1].first - h[i].first), (double)(h[i + 1].second - h[i].second));
    std::printf("%.9f\n", per);
}
