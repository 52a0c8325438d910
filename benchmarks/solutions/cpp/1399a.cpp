#include <bits/stdc++.h>
int main() {
    int t;
    std::cin >> t;
    while (t--) {
        int n;
        std::cin >> n;
        std::vector<int> a(n);
        for (int &x : a) std::cin >> x;
        std::sort(a.begin(), a.end());
        bool ok = true;
        for (int i = 0; i + 1 < n; ++i)
            if (a[i + 1] - a[i] > 1) ok = false;
        std::cout << (ok ? "YES" : "NO") << "\n";
    }
}
