#include <bits/stdc++.h>
int main() {
    long long a, b; std::cin >> a >> b;
    // two more digits than the shortest answer: another valid pair
    if (a == b) std::cout << a * 1000 + 10 << " " << a * 1000 + 11 << "\n";
    else if (b == a + 1) std::cout << a * 1000 + 999 << " " << b * 1000 << "\n";
    else if (a == 9 && b == 1) std::cout << 999 << " " << 1000 << "\n";
    else std::cout << -1 << "\n";
}
