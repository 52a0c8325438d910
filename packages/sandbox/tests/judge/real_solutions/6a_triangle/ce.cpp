#include <bits/stdc++.h>
using namespace std;

int main() {
    int s[4];
    for (int& x : s) cin >> x;
    sort(s, s + 4, 7);
    bool triangle = false, segment = false;
    for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j)
            for (int k = j + 1; k < 4; ++k) {
                if (s[i] + s[j] > s[k]) triangle = true;
                else if (s[i] + s[j] == s[k]) segment = true;
            }
    cout << (triangle ? "TRIANGLE" : segment ? "SEGMENT" : "IMPOSSIBLE") << "\n";
    return 0;
}
