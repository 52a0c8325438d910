#include <cstdio>
int main() {
    int t;
    std::scanf("%d", &t);
    while (t--) {
        long long n;
        std::scanf("%lld", &n);
        std::printf("%lld\n", (n + 4) / 5);
    }
}
