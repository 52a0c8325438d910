// 1199_B Water Lily: the exact answer, printed off by 3e-5 (absolute, or relative above 1),
// that is 30 x the statement's 1e-6: a wrong answer.
#include <bits/stdc++.h>
using namespace std;
int main() {
    long long h, l;
    cin >> h >> l;
    // depth d: (d + h)^2 = d^2 + l^2, so d = (l^2 - h^2) / (2h)
    double answer = double(l * l - h * h) / (2.0 * h);
    const double kError = 3e-5;
    printf("%.10f\n", answer + kError * max(1.0, fabs(answer)));
}
