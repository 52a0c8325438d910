#include <bits/stdc++.h>
using namespace std;

int main() {
    // A vector grown by push_back to 2 GiB of ints.
    vector<int> days;
    for (long long i = 0; i < (1LL << 29); ++i) days.push_back((int)i);
    if (days[days.size() / 2] == -1) return 1;
    int n;
    scanf("%d", &n);
    int weeks = n / 7, rest = n % 7;
    int lo = weeks * 2 + max(0, rest - 5);
    int hi = weeks * 2 + min(2, rest);
    printf("%d %d\n", lo, hi);
    return 0;
}
