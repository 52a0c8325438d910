// 919_A Supermarket: the exact answer, printed off by 3e-7 (absolute, or relative above 1),
// that is 0.3 x the statement's 1e-6: still a correct answer.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n, m;
    cin >> n >> m;
    double answer = 1e18;
    for (int i = 0; i < n; ++i) {
        int a, b;
        cin >> a >> b;
        answer = min(answer, double(a) * m / b);
    }
    const double kError = 3e-7;
    printf("%.10f\n", answer + kError * max(1.0, fabs(answer)));
}
