#include <bits/stdc++.h>
int main() {
    int n; std::cin >> n;
    std::vector<int> count(101, 0);
    for (int i = 0; i < n; i++) {
        int r; std::cin >> r;
        for (int j = 0; j < r; j++) { int x; std::cin >> x; count[x]++; }
    }
    for (int x = 100; x >= 1; x--) if (count[x] == n) std::cout << x << " ";
    std::cout << "\n";
}
