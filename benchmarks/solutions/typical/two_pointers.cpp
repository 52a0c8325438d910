#include <bits/stdc++.h>
using namespace std;
// Longest subarray with sum at most s (positive values); also distinct values via set.
int main() {
    int n;
    long long s;
    cin >> n >> s;
    vector<long long> a(n);
    for (auto& x : a) cin >> x;
    long long sum = 0;
    int best = 0;
    for (int l = 0, r = 0; r < n; ++r) {
        sum += a[r];
        while (sum > s) sum -= a[l++];
        best = max(best, r - l + 1);
    }
    set<long long> distinct(a.begin(), a.end());
    cout << best << " " << distinct.size() << "\n";
}
