#include <bits/stdc++.h>
using namespace std;
// Count primes up to n and print the largest.
int main() {
    int n;
    cin >> n;
    vector<bool> composite(n + 1, false);
    int count = 0, largest = -1;
    for (int i = 2; i <= n; ++i) {
        if (composite[i]) continue;
        ++count;
        largest = i;
        for (long long j = 1LL * i * i; j <= n; j += i) composite[j] = true;
    }
    cout << count << " " << largest << "\n";
}
