// 624_A Save Luke: the exact answer, printed off by 3e-5 (absolute, or relative above 1),
// that is 30 x the statement's 1e-6: a wrong answer.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int d, l, v1, v2;
    cin >> d >> l >> v1 >> v2;
    // the gap closes at v1 + v2 until it is as narrow as Luke
    double answer = double(l - d) / (v1 + v2);
    const double kError = 3e-5;
    printf("%.10f\n", answer + kError * max(1.0, fabs(answer)));
}
