#include <bits/stdc++.h>
using namespace std;

int main() {
    assert(false && "unreachable");
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
