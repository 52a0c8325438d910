#include <bits/stdc++.h>
using namespace std;

int main() {
    long long n, k, t;
    cin >> n >> k >> t;
    long long standing;
    if (t <= k) standing = t;
    else if (t <= n) standing = k;
    else standing = n + k - t;
    cout << standing << "\n";
    return 0;
}
