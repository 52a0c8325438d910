// Counts in 32-bit int: overflows when there are ~2e10 pairs.
#include <cstdio>
int main() {
    int n;
    std::scanf("%d", &n);
    int cnt[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        int x;
        std::scanf("%d", &x);
        cnt[x & 1]++;
    }
    int ans = cnt[0] * (cnt[0] - 1) / 2 + cnt[1] * (cnt[1] - 1) / 2;
    std::printf("%d\n", ans);
}
