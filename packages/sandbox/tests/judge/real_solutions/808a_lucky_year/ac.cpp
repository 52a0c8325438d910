#include <bits/stdc++.h>
using namespace std;

int main() {
    long long n;
    cin >> n;
    long long p = 1;
    while (p * 10 <= n) p *= 10;
    long long d = n / p;
    cout << (d + 1) * p - n << "\n";
    return 0;
}
