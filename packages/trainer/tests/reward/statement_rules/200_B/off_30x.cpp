// 200_B Drinks: the exact answer, printed off by 3e-3 (absolute, or relative above 1),
// that is 30 x the statement's 1e-4: a wrong answer.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    cin >> n;
    long long sum = 0;
    for (int i = 0; i < n; ++i) {
        int p;
        cin >> p;
        sum += p;
    }
    double answer = double(sum) / n;  // equal volumes: the mean of the percentages
    const double kError = 3e-3;
    printf("%.10f\n", answer + kError * max(1.0, fabs(answer)));
}
