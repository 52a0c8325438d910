#include <bits/stdc++.h>
int main() {
    int n; std::cin >> n;
    if (n % 2) { std::cout << -1 << "\n"; return 0; }
    for (int i = 1; i <= n; i++) std::cout << n + 1 - i << " \n"[i == n];  // the reversal
}
