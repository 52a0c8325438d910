// 849_A Odds and Ends, WRONG: forgets that the length n must be odd.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    cin >> n;
    vector<int> a(n);
    for (int& x : a) cin >> x;
    bool ok = a[0] % 2 == 1 && a[n - 1] % 2 == 1;
    cout << (ok ? "Yes" : "No") << "\n";
}
