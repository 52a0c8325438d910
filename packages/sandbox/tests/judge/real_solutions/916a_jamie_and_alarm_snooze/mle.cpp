#include <bits/stdc++.h>
using namespace std;

static bool lucky(int t) {
    int h = t / 60, m = t % 60;
    return h % 10 == 7 || h / 10 == 7 || m % 10 == 7 || m / 10 == 7;
}

int main() {
    // One 1 GiB vector, zero-filled (touched) by its constructor.
    vector<char> table(1LL << 30);
    table[12345] = 1;
    if (table[(1LL << 30) - 1] == 42) return 1;
    int x, hh, mm;
    cin >> x >> hh >> mm;
    int t = hh * 60 + mm, y = 0;
    while (!lucky(t)) {
        t = ((t - x) % 1440 + 1440) % 1440;
        ++y;
    }
    cout << y << "\n";
    return 0;
}
