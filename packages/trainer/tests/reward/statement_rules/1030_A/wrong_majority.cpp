// 1030_A In Search of an Easy Problem, WRONG: takes the majority opinion instead of "any 1".
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    cin >> n;
    int hard = 0;
    for (int i = 0; i < n; ++i) {
        int v;
        cin >> v;
        hard += v;
    }
    cout << (2 * hard > n ? "HARD" : "EASY") << "\n";
}
