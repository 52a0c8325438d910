// 849_A Odds and Ends: possible iff n is odd and the first and last elements are odd; "YES"/"NO".
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    cin >> n;
    vector<int> a(n);
    for (int& x : a) cin >> x;
    bool ok = n % 2 == 1 && a[0] % 2 == 1 && a[n - 1] % 2 == 1;
    cout << (ok ? "YES" : "NO") << "\n";
}
