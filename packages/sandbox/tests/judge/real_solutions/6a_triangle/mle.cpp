#include <bits/stdc++.h>
using namespace std;

int main() {
    // 400 MB with new[] (the limit is 64 MB), all written.
    int* volatile memo = new int[100000000];
    memset(memo, 0x3f, 100000000 * sizeof(int));
    volatile int probe = 99999999;
    if (memo[probe] == 0) return 1;
    int s[4];
    for (int& x : s) cin >> x;
    sort(s, s + 4);
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
