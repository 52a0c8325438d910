// 706_A Beru-taxi: the exact answer, printed off by 3e-5 (absolute, or relative above 1),
// that is 30 x the statement's 1e-6: a wrong answer.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int a, b, n;
    cin >> a >> b >> n;
    double answer = 1e18;
    for (int i = 0; i < n; ++i) {
        int x, y, v;
        cin >> x >> y >> v;
        answer = min(answer, hypot(double(x - a), double(y - b)) / v);
    }
    const double kError = 3e-5;
    printf("%.10f\n", answer + kError * max(1.0, fabs(answer)));
}
