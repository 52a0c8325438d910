#include <bits/stdc++.h>
using namespace std;

int main() {
    // Reads through a null pointer: SIGSEGV.
    const long long* volatile cell = nullptr;
    printf("%lld\n", *cell);
    long long h, l;
    cin >> h >> l;
    long double depth = (long double)(l * l - h * h) / (2.0L * h);
    cout << fixed << setprecision(13) << depth << "\n";
    return 0;
}
