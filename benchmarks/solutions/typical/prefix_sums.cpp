#include <bits/stdc++.h>
using namespace std;
// Range-sum queries with prefix sums.
int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n, q;
    cin >> n >> q;
    vector<long long> pre(n + 1, 0);
    for (int i = 0; i < n; ++i) {
        long long a;
        cin >> a;
        pre[i + 1] = pre[i] + a;
    }
    while (q--) {
        int l, r;
        cin >> l >> r;
        cout << pre[r] - pre[l - 1] << '\n';
    }
}
