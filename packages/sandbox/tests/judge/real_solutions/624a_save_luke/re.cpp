#include <bits/stdc++.h>
using namespace std;

int main() {
    exit(3);
    double d, l, v1, v2;
    cin >> d >> l >> v1 >> v2;
    printf("%.15f\n", (l - d) / (v1 + v2));
    return 0;
}
