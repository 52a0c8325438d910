#include <bits/stdc++.h>
int main() {
    int n;
    scanf("%d", &n);
    double prize = 0;
    for (int s = n; s >= 1; --s) prize += 1.0 / s;
    printf("%.12f\n", prize);
}
