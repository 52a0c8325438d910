#include <bits/stdc++.h>
using namespace std;

int main() {
    // A "simulation" of 10^13 days: hours of CPU.
    volatile long long counted = 0;
    for (long long day = 0; day < 10000000000000LL; ++day) counted += day % 7 >= 5;
    int n;
    scanf("%d", &n);
    int weeks = n / 7, rest = n % 7;
    int lo = weeks * 2 + max(0, rest - 5);
    int hi = weeks * 2 + min(2, rest);
    printf("%d %d\n", lo, hi);
    return 0;
}
