// 1373_B 01 Game, WRONG: says Alice wins whenever she has a first move.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int t;
    cin >> t;
    while (t--) {
        string s;
        cin >> s;
        long zeros = count(s.begin(), s.end(), '0');
        long ones = (long)s.size() - zeros;
        cout << (min(zeros, ones) > 0 ? "DA" : "NET") << "\n";
    }
}
