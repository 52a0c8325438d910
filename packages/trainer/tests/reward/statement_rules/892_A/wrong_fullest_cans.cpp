// 892_A Greed, WRONG: pours into the two cans holding the most cola, not the two largest cans.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    cin >> n;
    vector<long long> a(n), b(n);
    for (auto& x : a) cin >> x;
    for (auto& x : b) cin >> x;
    long long total = accumulate(a.begin(), a.end(), 0LL);
    vector<int> order(n);
    iota(order.begin(), order.end(), 0);
    sort(order.begin(), order.end(), [&](int i, int j) { return a[i] > a[j]; });
    cout << (total <= b[order[0]] + b[order[1]] ? "yes" : "no") << "\n";
}
