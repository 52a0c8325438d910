#include <bits/stdc++.h>
int main() {
    int t;
    std::cin >> t;
    while (t--) {
        long long n;
        std::cin >> n;
        int count = 0;
        for (int length = 1; length <= 10; ++length)
            for (int digit = 1; digit <= 9; ++digit)
                if (std::stoll(std::string(length, '0' + digit)) <= n) ++count;
        std::cout << count << "\n";
    }
}
