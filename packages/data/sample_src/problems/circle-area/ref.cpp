#include <cmath>
#include <cstdio>
int main() {
    const double PI = std::acos(-1.0);
    int t;
    std::scanf("%d", &t);
    while (t--) {
        long long r, R;
        std::scanf("%lld %lld", &r, &R);
        std::printf("%.9f\n", PI * (double)(R * R - r * r));
    }
}
