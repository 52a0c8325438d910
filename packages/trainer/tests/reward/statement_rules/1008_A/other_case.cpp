// 1008_A Romaji: every consonant other than 'n' must be followed by a vowel; "Yes"/"No".
#include <bits/stdc++.h>
using namespace std;
bool vowel(char c) { return string("aouie").find(c) != string::npos; }
int main() {
    string s;
    cin >> s;
    bool ok = true;
    for (size_t i = 0; i < s.size(); ++i) {
        if (vowel(s[i]) || s[i] == 'n') continue;
        if (i + 1 == s.size() || !vowel(s[i + 1])) ok = false;
    }
    cout << (ok ? "Yes" : "No") << "\n";
}
