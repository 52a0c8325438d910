#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        int n; std::cin >> n;
        bool found = false;
        for (int c = n / 7; c >= 0 && !found; c--)  // most 7-room flats first
            for (int b = (n - 7 * c) / 5; b >= 0 && !found; b--)
                if ((n - 7 * c - 5 * b) % 3 == 0) {
                    std::cout << (n - 7 * c - 5 * b) / 3 << " " << b << " " << c << "\n";
                    found = true;
                }
        if (!found) std::cout << -1 << "\n";
    }
}
