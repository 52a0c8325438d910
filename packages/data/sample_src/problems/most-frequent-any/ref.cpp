#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<long long> a(n);
    for (auto& x : a) std::scanf("%lld", &x);
    std::sort(a.begin(), a.end());
    long long best = a[0];
    int bestCnt = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && a[j] == a[i]) j++;
        if (j - i > bestCnt) { bestCnt = j - i; best = a[i]; }  // strict: smallest wins ties
        i = j;
    }
    std::printf("%lld\n", best);
}
