#include <bits/stdc++.h>
int main() {
    int n, m; std::cin >> n >> m;
    std::vector<bool> covered(m + 1, false);
    for (int i = 0; i < n; i++) {
        int l, r; std::cin >> l >> r;
        for (int x = l; x <= r; x++) covered[x] = true;
    }
    std::vector<int> free;
    for (int x = m; x >= 1; x--) if (!covered[x]) free.push_back(x);
    std::cout << free.size() << "\n";
    for (int x : free) std::cout << x << " ";
    std::cout << "\n";
}
