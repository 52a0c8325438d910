#include <cstdio>
int main() {
    int t;
    if (scanf("%d", &t) != 1) return 0;
    while (t--) {
        long long n;
        scanf("%lld", &n);
        puts(n % 2 == 0 && n >= 4 ? "YES" : "NO");
    }
}
