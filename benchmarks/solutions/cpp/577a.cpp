#include <bits/stdc++.h>
int main() {
    long long n, x;
    std::cin >> n >> x;
    int count = 0;
    for (long long i = 1; i <= n; ++i)
        if (x % i == 0 && x / i <= n) ++count;
    std::cout << count << "\n";
}
