// 1075_A The King's Race: king distances; white moves first so wins ties; "WHITE"/"BLACK".
#include <bits/stdc++.h>
using namespace std;
int main() {
    long long n, x, y;
    cin >> n >> x >> y;
    long long white = max(x - 1, y - 1), black = max(n - x, n - y);
    cout << (white <= black ? "WHITE" : "BLACK") << "\n";
}
