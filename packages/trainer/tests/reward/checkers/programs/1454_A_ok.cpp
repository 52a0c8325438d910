#include <bits/stdc++.h>
int main() {
    int t; std::cin >> t;
    while (t--) {
        int n; std::cin >> n;
        for (int i = 1; i <= n; i++) std::cout << (i == 1 ? n : i - 1) << " \n"[i == n];
    }
}
