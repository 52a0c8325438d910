#include <cstdio>
int main() {
    int n;
    std::scanf("%d", &n);
    long long cnt[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        long long x;
        std::scanf("%lld", &x);
        cnt[x & 1]++;
    }
    std::printf("%lld\n", cnt[0] * (cnt[0] - 1) / 2 + cnt[1] * (cnt[1] - 1) / 2);
}
