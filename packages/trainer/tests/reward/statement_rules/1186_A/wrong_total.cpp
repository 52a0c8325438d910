// 1186_A Vus the Cossack and a Contest, WRONG: checks only the total number of items.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n, m, k;
    cin >> n >> m >> k;
    cout << (m + k >= 2 * n ? "Yes" : "No") << "\n";
}
