// Sorts and takes the second element, ignoring ties at the top.
#include <bits/stdc++.h>
int main() {
    int n;
    std::scanf("%d", &n);
    std::vector<long long> a(n);
    for (auto& x : a) std::scanf("%lld", &x);
    std::sort(a.rbegin(), a.rend());
    std::printf("%lld\n", n >= 2 ? a[1] : -1LL);
}
