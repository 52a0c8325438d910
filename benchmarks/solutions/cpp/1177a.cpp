#include <bits/stdc++.h>
int main() {
    long long k, length = 1, count = 9, start = 1;
    std::cin >> k;
    while (k > length * count) {
        k -= length * count;
        ++length, count *= 10, start *= 10;
    }
    long long number = start + (k - 1) / length;
    std::cout << std::to_string(number)[(k - 1) % length] << "\n";
}
