#include <bits/stdc++.h>
using namespace std;
// Smallest time to make k items with machines of given speeds.
int main() {
    long long n, k;
    cin >> n >> k;
    vector<long long> t(n);
    for (auto& x : t) cin >> x;
    long long lo = 0, hi = *min_element(t.begin(), t.end()) * k;
    while (lo < hi) {
        long long mid = lo + (hi - lo) / 2, made = 0;
        for (long long x : t) made = min(k, made + mid / x);
        if (made >= k) hi = mid;
        else lo = mid + 1;
    }
    cout << lo << "\n";
}
