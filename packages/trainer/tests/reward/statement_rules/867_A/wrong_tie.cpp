// 867_A Between the Offices, WRONG: answers YES on a tie (>= instead of >).
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    string s;
    cin >> n >> s;
    int toSF = 0, toSeattle = 0;
    for (int i = 1; i < n; ++i) {
        if (s[i - 1] == 'S' && s[i] == 'F') ++toSF;
        if (s[i - 1] == 'F' && s[i] == 'S') ++toSeattle;
    }
    cout << (toSF >= toSeattle ? "YES" : "NO") << "\n";
}
