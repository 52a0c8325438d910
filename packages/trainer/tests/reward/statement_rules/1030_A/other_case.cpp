// 1030_A In Search of an Easy Problem: HARD if anyone answered 1; "easy"/"hard".
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    cin >> n;
    bool hard = false;
    for (int i = 0; i < n; ++i) {
        int v;
        cin >> v;
        hard = hard || v == 1;
    }
    cout << (hard ? "hard" : "easy") << "\n";
}
