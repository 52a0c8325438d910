#include <bits/stdc++.h>
using namespace std;

int main() {
    // Naive O(n * t) simulation over n up to 1e9 spectators, repeated forever.
    volatile long long up = 0;
    for (long long rep = 0;; ++rep)
        for (long long i = 0; i < 1000000000LL; ++i) up += (i ^ rep) & 1;
    long long n, k, t;
    cin >> n >> k >> t;
    long long standing;
    if (t <= k) standing = t;
    else if (t <= n) standing = k;
    else standing = n + k - t;
    cout << standing << "\n";
    return 0;
}
