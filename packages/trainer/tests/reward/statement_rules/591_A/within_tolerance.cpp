// 591_A Wizards' Duel: the exact answer, printed off by 3e-5 (absolute, or relative above 1),
// that is 0.3 x the statement's 1e-4: still a correct answer.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int l, p, q;
    cin >> l >> p >> q;
    // Both meetings happen at the same point: the impulses meet after l / (p + q) seconds.
    double answer = double(l) * p / (p + q);
    const double kError = 3e-5;
    printf("%.10f\n", answer + kError * max(1.0, fabs(answer)));
}
