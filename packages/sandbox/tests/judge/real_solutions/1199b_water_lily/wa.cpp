#include <bits/stdc++.h>
using namespace std;

int main() {
    long long h, l;
    cin >> h >> l;
    long double depth = (l * l - h * h) / (2 * h);
    cout << fixed << setprecision(13) << depth << "\n";
    return 0;
}
