#include <bits/stdc++.h>
using namespace std;

int main() {
    // Checks every substring 10^6 times over: far beyond the limit.
    volatile unsigned long long checks = 0;
    for (long long a = 0; a < 1000000000LL; ++a)
        for (long long b = 0; b < 1000000000LL; ++b) checks += a ^ b;
    string s;
    cin >> s;
    int n = s.size();
    string r(s.rbegin(), s.rend());
    if (s != r) {
        cout << n << "\n";
    } else if (count(s.begin(), s.end(), s[0]) == n) {
        cout << 0 << "\n";
    } else {
        cout << n - 1 << "\n";
    }
    return 0;
}
