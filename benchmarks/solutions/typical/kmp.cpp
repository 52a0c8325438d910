#include <bits/stdc++.h>
using namespace std;
// Count occurrences of a pattern with the prefix function.
int main() {
    string text, pat;
    cin >> text >> pat;
    string s = pat + '#' + text;
    vector<int> pi(s.size(), 0);
    int count = 0;
    for (size_t i = 1; i < s.size(); ++i) {
        int k = pi[i - 1];
        while (k > 0 && s[i] != s[k]) k = pi[k - 1];
        if (s[i] == s[k]) ++k;
        pi[i] = k;
        if (k == (int)pat.size()) ++count;
    }
    cout << count << "\n";
}
