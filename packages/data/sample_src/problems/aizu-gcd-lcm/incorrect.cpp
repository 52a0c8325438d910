// Computes the LCM as a * b / g in 32-bit arithmetic: overflows.
#include <cstdio>
int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }
int main() {
    int a, b;
    while (std::scanf("%d %d", &a, &b) == 2) {
        int g = gcd(a, b);
        std::printf("%d %d\n", g, a * b / g);
    }
}
