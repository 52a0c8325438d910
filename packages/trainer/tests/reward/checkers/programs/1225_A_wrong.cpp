#include <bits/stdc++.h>
int main() {
    long long a, b; std::cin >> a >> b;
    if (a == b) std::cout << a * 10 << " " << a * 10 + 1 << "\n";
    else if (b == a + 1) std::cout << a << " " << b << "\n";
    else std::cout << -1 << "\n";  // forgets 9 -> 10
}
