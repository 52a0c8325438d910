// Greedy by earliest start instead of earliest end.
#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<std::pair<long long, long long>> v(n);  // (start, end)
    for (auto& [l, r] : v) std::scanf("%lld %lld", &l, &r);
    std::sort(v.begin(), v.end());
    long long free_from = LLONG_MIN;
    int cnt = 0;
    for (auto& [l, r] : v)
        if (l >= free_from) { cnt++; free_from = r; }
    std::printf("%d\n", cnt);
}
