#include <bits/stdc++.h>
int main() {
    int t;
    std::cin >> t;
    while (t--) {
        long long n;
        std::cin >> n;
        while (n % 2 == 0) n /= 2;
        std::cout << (n > 1 ? "YES" : "NO") << "\n";
    }
}
