#include <bits/stdc++.h>
using namespace std;

int main() {
    // 200 MB of ints (the limit is 64 MB), all written.
    vector<int> digit_sums(50000000);
    iota(digit_sums.begin(), digit_sums.end(), 0);
    if (digit_sums[49999999] == 0) return 1;
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
