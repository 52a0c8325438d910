#include <bits/stdc++.h>
using namespace std;

int main() {
    string s;
    cin >> s;
    int n = s.size();
    const string r(s.rbegin(), s.rend());
    r += "!";
    if (s != r) {
        cout << n << "\n";
    } else if (count(s.begin(), s.end(), s[0]) == n) {
        cout << 0 << "\n";
    } else {
        cout << n - 1 << "\n";
    }
    return 0;
}
