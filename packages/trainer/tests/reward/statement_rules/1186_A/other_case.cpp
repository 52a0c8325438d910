// 1186_A Vus the Cossack and a Contest: enough pens and notebooks for everyone; "YES"/"NO".
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n, m, k;
    cin >> n >> m >> k;
    cout << (m >= n && k >= n ? "YES" : "NO") << "\n";
}
