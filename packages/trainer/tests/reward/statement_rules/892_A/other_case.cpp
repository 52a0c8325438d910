// 892_A Greed: all cola fits into the two largest cans; prints the statement's "YES"/"NO"
// while the tests expect "yes"/"no".
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    cin >> n;
    long long total = 0;
    for (int i = 0; i < n; ++i) {
        long long a;
        cin >> a;
        total += a;
    }
    long long best = 0, second = 0;
    for (int i = 0; i < n; ++i) {
        long long b;
        cin >> b;
        if (b > best) {
            second = best;
            best = b;
        } else if (b > second) {
            second = b;
        }
    }
    cout << (total <= best + second ? "YES" : "NO") << "\n";
}
