// 157_B Trace: the exact answer, printed off by 3e-3 (absolute, or relative above 1),
// that is 30 x the statement's 1e-4: a wrong answer.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    cin >> n;
    vector<int> r(n);
    for (int& x : r) cin >> x;
    sort(r.rbegin(), r.rend());  // largest first: the ring inside the largest circle is red, the next blue, ...
    long long sum = 0;
    for (int i = 0; i < n; ++i) sum += (i % 2 == 0 ? 1 : -1) * 1LL * r[i] * r[i];
    double answer = acos(-1.0) * sum;
    const double kError = 3e-3;
    printf("%.10f\n", answer + kError * max(1.0, fabs(answer)));
}
