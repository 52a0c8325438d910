#include <bits/stdc++.h>
int main() {
    int t;
    std::cin >> t;
    while (t--) {
        int n;
        std::cin >> n;
        std::vector<int> x(n);
        for (int &v : x) std::cin >> v;
        std::set<int> areas;
        for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j) areas.insert(x[j] - x[i]);
        std::cout << areas.size() << "\n";
    }
}
