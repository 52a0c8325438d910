// 1373_B 01 Game: every move removes one '0' and one '1', so min(zeros, ones) moves happen;
// Alice wins iff that number is odd. Prints "Da"/"Net".
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
        cout << (min(zeros, ones) % 2 == 1 ? "Da" : "Net") << "\n";
    }
}
