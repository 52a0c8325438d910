#include <bits/stdc++.h>
int main() {
    int t;
    std::cin >> t;
    while (t--) {
        long long a, b;
        std::cin >> a >> b;
        std::cout << (std::llabs(a - b) + 9) / 10 << "\n";
    }
}
