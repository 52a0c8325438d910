#include <bits/stdc++.h>
using namespace std;

int main() {
    int n;
    scanf("%d", &n);
    int weeks = n / 7, rest = n % 7;
    string lo = weeks * 2 + max(0, rest - 5);
    int hi = weeks * 2 + min(2, rest);
    printf("%d %d\n", lo, hi);
    return 0;
}
