#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        int n; std::cin >> n;
        int c = n / 7, r = n % 7;  // greedy: as many 7s as fit, never fewer
        bool found = false;
        for (int b = r / 5; b >= 0 && !found; b--)
            if ((r - 5 * b) % 3 == 0) {
                std::cout << (r - 5 * b) / 3 << " " << b << " " << c << "\n";
                found = true;
            }
        if (!found) std::cout << -1 << "\n";  // wrong for 8 = 3 + 5, 11, ...
    }
}
