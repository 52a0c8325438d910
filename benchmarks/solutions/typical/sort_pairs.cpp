#include <bits/stdc++.h>
using namespace std;
// Sort points by x then y and print them.
int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    cin >> n;
    vector<pair<long long, long long>> p(n);
    for (auto& [x, y] : p) cin >> x >> y;
    sort(p.begin(), p.end());
    for (auto& [x, y] : p) cout << x << ' ' << y << '\n';
}
