// 1293_B JOE is on TV!: the exact answer, printed off by 3e-5 (absolute, or relative above 1),
// that is 0.3 x the statement's 1e-4: still a correct answer.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    cin >> n;
    // One opponent fails per question: 1/n + 1/(n-1) + ... + 1, summed smallest terms first.
    double answer = 0;
    for (int s = n; s >= 1; --s) answer += 1.0 / s;
    const double kError = 3e-5;
    printf("%.10f\n", answer + kError * max(1.0, fabs(answer)));
}
