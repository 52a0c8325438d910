#include <bits/stdc++.h>
using namespace std;

static bool lucky(int t) {
    int h = t / 60, m = t % 60;
    return h % 10 == 7 || h / 10 == 7 || m % 10 == 7 || m / 10 == 7;
}

int main() {
    // Busy loop that never ends: the judge must stop it at the CPU time limit.
    volatile unsigned long long spin = 0;
    while (true) ++spin;
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
