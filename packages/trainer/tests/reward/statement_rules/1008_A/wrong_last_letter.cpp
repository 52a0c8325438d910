// 1008_A Romaji, WRONG: never checks a consonant (not 'n') standing at the end of the word.
#include <bits/stdc++.h>
using namespace std;
bool vowel(char c) { return string("aouie").find(c) != string::npos; }
int main() {
    string s;
    cin >> s;
    bool ok = true;
    for (size_t i = 0; i + 1 < s.size(); ++i) {
        if (vowel(s[i]) || s[i] == 'n') continue;
        if (!vowel(s[i + 1])) ok = false;
    }
    cout << (ok ? "YES" : "NO") << "\n";
}
