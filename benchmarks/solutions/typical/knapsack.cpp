#include <bits/stdc++.h>
using namespace std;
// 0/1 knapsack over capacity.
int main() {
    int n, cap;
    cin >> n >> cap;
    vector<long long> best(cap + 1, 0);
    for (int i = 0; i < n; ++i) {
        int w;
        long long v;
        cin >> w >> v;
        for (int c = cap; c >= w; --c) best[c] = max(best[c], best[c - w] + v);
    }
    cout << *max_element(best.begin(), best.end()) << "\n";
    return 0;
}
