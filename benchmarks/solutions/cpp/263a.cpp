#include <bits/stdc++.h>
int main() {
    for (int row = 0; row < 5; ++row)
        for (int col = 0; col < 5; ++col) {
            int v;
            std::cin >> v;
            if (v == 1) std::cout << std::abs(row - 2) + std::abs(col - 2) << "\n";
        }
}
