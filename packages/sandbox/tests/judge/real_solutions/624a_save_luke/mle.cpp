#include <bits/stdc++.h>
using namespace std;

int main() {
    deque<long long> history;
    for (long long t = 0; t < (1LL << 31); ++t) history.push_back(t);
    if (history.front() == 1) return 1;
    double d, l, v1, v2;
    cin >> d >> l >> v1 >> v2;
    printf("%.15f\n", (l - d) / (v1 + v2));
    return 0;
}
