#include <bits/stdc++.h>
int main() {
    long long n, m;
    std::cin >> n >> m;
    if (m % n) {
        std::cout << -1 << "\n";
        return 0;
    }
    long long q = m / n;
    int moves = 0;
    for (int f : {2, 3})
        while (q % f == 0) {
            q /= f;
            ++moves;
        }
    std::cout << (q == 1 ? moves : -1) << "\n";
}
