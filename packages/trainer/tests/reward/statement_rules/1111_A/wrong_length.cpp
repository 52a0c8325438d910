// 1111_A Superhero Transformation, WRONG: compares only the common prefix, ignoring lengths.
#include <bits/stdc++.h>
using namespace std;
bool vowel(char c) { return string("aeiou").find(c) != string::npos; }
int main() {
    string s, t;
    cin >> s >> t;
    bool ok = true;
    for (size_t i = 0; ok && i < min(s.size(), t.size()); ++i) ok = vowel(s[i]) == vowel(t[i]);
    cout << (ok ? "Yes" : "No") << "\n";
}
