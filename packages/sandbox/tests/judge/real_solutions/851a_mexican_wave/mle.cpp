#include <bits/stdc++.h>
using namespace std;

int main() {
    // malloc without a NULL check: once the cap refuses memory it writes through NULL.
    for (int i = 0; i < 16384; ++i) {
        char* block = (char*)malloc(1 << 20);
        memset(block, 1, 1 << 20);
    }
    long long n, k, t;
    cin >> n >> k >> t;
    long long standing;
    if (t <= k) standing = t;
    else if (t <= n) standing = k;
    else standing = n + k - t;
    cout << standing << "\n";
    return 0;
}
