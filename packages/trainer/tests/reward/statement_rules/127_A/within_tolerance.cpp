// 127_A Wasted Time: the exact answer, printed off by 3e-7 (absolute, or relative above 1),
// that is 0.3 x the statement's 1e-6: still a correct answer.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n, k;
    cin >> n >> k;
    vector<int> x(n), y(n);
    for (int i = 0; i < n; ++i) cin >> x[i] >> y[i];
    double length = 0;
    for (int i = 1; i < n; ++i) length += hypot(double(x[i] - x[i - 1]), double(y[i] - y[i - 1]));
    double answer = length * k / 50.0;  // 50 mm per second
    const double kError = 3e-7;
    printf("%.10f\n", answer + kError * max(1.0, fabs(answer)));
}
