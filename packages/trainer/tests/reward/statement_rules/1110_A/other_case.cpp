// 1110_A Parity: parity of sum a_i * b^(k-i), taken mod 2; "EVEN"/"ODD".
#include <bits/stdc++.h>
using namespace std;
int main() {
    int b, k;
    cin >> b >> k;
    int parity = 0;
    for (int i = 0; i < k; ++i) {
        int a;
        cin >> a;
        parity = (parity * (b % 2) + a) % 2;
    }
    cout << (parity ? "ODD" : "EVEN") << "\n";
}
