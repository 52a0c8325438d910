// 1111_A Superhero Transformation: same length and same vowel/consonant pattern;
// prints the statement's "Yes"/"No" while the tests mix "NO", "No" and "YES".
#include <bits/stdc++.h>
using namespace std;
bool vowel(char c) { return string("aeiou").find(c) != string::npos; }
int main() {
    string s, t;
    cin >> s >> t;
    bool ok = s.size() == t.size();
    for (size_t i = 0; ok && i < s.size(); ++i) ok = vowel(s[i]) == vowel(t[i]);
    cout << (ok ? "Yes" : "No") << "\n";
}
