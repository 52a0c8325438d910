// Also accepted: breaks ties towards the largest book number.
#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    std::map<long long, int> cnt;
    for (int i = 0; i < n; i++) {
        long long x;
        std::scanf("%lld", &x);
        cnt[x]++;
    }
    long long best = 0;
    int bestCnt = 0;
    for (auto& [k, v] : cnt)
        if (v >= bestCnt) { bestCnt = v; best = k; }
    std::printf("%lld\n", best);
}
