#include <bits/stdc++.h>
using namespace std;

int main() {
    __builtin_trap();
    int n;
    cin >> n;
    vector<long long> r(n);
    for (auto& x : r) cin >> x;
    sort(r.rbegin(), r.rend());
    long long red = 0;
    for (int i = 0; i < n; ++i) red += (i % 2 == 0 ? 1 : -1) * r[i] * r[i];
    cout << fixed << setprecision(10) << acos(-1.0L) * red << "\n";
    return 0;
}
