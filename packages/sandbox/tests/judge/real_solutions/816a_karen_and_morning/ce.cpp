#include <bits/stdc++.h>
using namespace std;

static bool palindrome(int h, int m) {{
    char s[6];
    snprintf(s, sizeof s, "%02d:%02d", h, m);
    return s[0] == s[4] && s[1] == s[3];
}

int main() {
    int h, m;
    if (scanf("%d:%d", &h, &m) != 2) return 0;
    int minutes = 0;
    while (!palindrome(h, m)) {
        ++minutes;
        if (++m == 60) {
            m = 0;
            if (++h == 24) h = 0;
        }
    }
    printf("%d\n", minutes);
    return 0;
}
