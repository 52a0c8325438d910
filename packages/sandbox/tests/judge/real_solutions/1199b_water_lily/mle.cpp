#include <bits/stdc++.h>
using namespace std;

int main() {
    // A 20000 x 20000 grid of ints: 1.6 GB.
    vector<vector<int>> grid(20000, vector<int>(20000, 1));
    if (grid[19999][19999] != 1) return 1;
    long long h, l;
    cin >> h >> l;
    long double depth = (long double)(l * l - h * h) / (2.0L * h);
    cout << fixed << setprecision(13) << depth << "\n";
    return 0;
}
