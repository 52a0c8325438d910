#include <bits/stdc++.h>
using namespace std;

int main() {
    volatile unsigned spin = 1;
    while (spin != 0) spin = spin * 1664525u + 1013904223u | 1u;
    int a;
    cin >> a;
    long long sum = 0;
    for (int b = 2; b < a; ++b) {
        for (int x = a; x > 0; x /= b) sum += x % b;
    }
    long long den = a - 2;
    long long g = __gcd(sum, den);
    cout << sum / g << "/" << den / g << "\n";
    return 0;
}
