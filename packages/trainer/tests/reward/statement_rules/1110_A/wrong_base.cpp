// 1110_A Parity, WRONG: adds the digits' parities as if the base were always odd.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int b, k;
    cin >> b >> k;
    int parity = 0;
    for (int i = 0; i < k; ++i) {
        int a;
        cin >> a;
        parity = (parity + a) % 2;
    }
    cout << (parity ? "odd" : "even") << "\n";
}
