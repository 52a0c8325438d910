// 1075_A The King's Race, WRONG: gives ties to black although white moves first.
#include <bits/stdc++.h>
using namespace std;
int main() {
    long long n, x, y;
    cin >> n >> x >> y;
    long long white = max(x - 1, y - 1), black = max(n - x, n - y);
    cout << (white < black ? "White" : "Black") << "\n";
}
