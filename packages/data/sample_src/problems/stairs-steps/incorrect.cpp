// Rounds down instead of up: 12 steps would need only 2 moves.
#include <cstdio>
int main() {
    int t;
    std::scanf("%d", &t);
    while (t--) {
        long long n;
        std::scanf("%lld", &n);
        long long m = n / 5;
        std::printf("%lld\n", m == 0 ? 1 : m);
    }
}
