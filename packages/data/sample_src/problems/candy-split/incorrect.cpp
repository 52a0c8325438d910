// Forgets that both parts must be positive: answers YES for n = 2.
#include <cstdio>
int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        long long n;
        scanf("%lld", &n);
        puts(n % 2 == 0 ? "YES" : "NO");
    }
}
