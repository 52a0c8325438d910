#include <bits/stdc++.h>
using namespace std;

int main() {
    // Keeps every 1 KiB line it ever formats: grows without bound.
    vector<string> lines;
    for (long long i = 0; i < (1LL << 24); ++i) lines.emplace_back(1024, char(i));
    if (lines.back()[0] == 0) return 1;
    int n;
    scanf("%d", &n);
    double prize = 0;
    for (int s = n; s >= 1; --s) prize += 1.0 / s;
    printf("%.12f\n", prize);
    return 0;
}
