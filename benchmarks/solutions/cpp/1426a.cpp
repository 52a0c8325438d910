#include <bits/stdc++.h>
int main() {
    int t;
    std::cin >> t;
    while (t--) {
        int n, x;
        std::cin >> n >> x;
        std::cout << (n <= 2 ? 1 : (n - 3) / x + 2) << "\n";
    }
}
