// Uses pi = 3.14, which is too coarse for a 1e-6 relative error.
#include <cstdio>
int main() {
    int t;
    std::scanf("%d", &t);
    while (t--) {
        long long r, R;
        std::scanf("%lld %lld", &r, &R);
        std::printf("%.9f\n", 3.14 * (double)(R * R - r * r));
    }
}
