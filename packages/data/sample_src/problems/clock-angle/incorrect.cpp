// Treats the hour hand as jumping once per hour.
#include <cmath>
#include <cstdio>
int main() {
    int t;
    std::scanf("%d", &t);
    while (t--) {
        int h, m;
        std::scanf("%d %d", &h, &m);
        double hour = 30.0 * (h % 12), minute = 6.0 * m;
        double d = std::fabs(hour - minute);
        if (d > 180) d = 360 - d;
        std::printf("%.6f\n", d);
    }
}
