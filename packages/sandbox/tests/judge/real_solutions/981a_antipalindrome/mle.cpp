#include <bits/stdc++.h>
using namespace std;

// A 320 MB static table (the limit is 256 MB), touched page by page.
static int table[80000000];

int main() {
    for (long long i = 0; i < 80000000LL; i += 1024) table[i] = (int)i;
    string s;
    cin >> s;
    int n = s.size();
    string r(s.rbegin(), s.rend());
    if (s != r) {
        cout << n << "\n";
    } else if (count(s.begin(), s.end(), s[0]) == n) {
        cout << 0 << "\n";
    } else {
        cout << n - 1 << "\n";
    }
    return table[4096] == 7 ? 1 : 0;
}
