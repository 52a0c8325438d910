#include <bits/stdc++.h>
int main() {
    int n, m; std::cin >> n >> m;
    for (int i = 0; i < m; i++) std::cout << n / m + (i < n % m ? 1 : 0) << " ";
    std::cout << "\n";
}
