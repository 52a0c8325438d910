#include <bits/stdc++.h>
using namespace std;

int main() {
    long long h, l, h;
    cin >> h >> l;
    long double depth = (long double)(l * l - h * h) / (2.0L * h);
    cout << fixed << setprecision(13) << depth << "\n";
    return 0;
}
