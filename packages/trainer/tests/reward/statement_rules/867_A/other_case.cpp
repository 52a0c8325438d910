// 867_A Between the Offices: count S->F and F->S flights; answer words in lower case.
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
    cout << (toSF > toSeattle ? "yes" : "no") << "\n";
}
