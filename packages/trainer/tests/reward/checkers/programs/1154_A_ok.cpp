#include <bits/stdc++.h>
int main() {
    std::vector<long long> x(4);
    for (auto& v : x) std::cin >> v;
    std::sort(x.begin(), x.end());
    // the three numbers, largest first: another order than the expected one
    std::cout << x[3] - x[0] << " " << x[3] - x[1] << " " << x[3] - x[2] << "\n";
}
