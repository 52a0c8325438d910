#include <bits/stdc++.h>
int main() {
    long long n, bills = 0;
    std::cin >> n;
    for (int value : {100, 20, 10, 5, 1}) {
        bills += n / value;
        n %= value;
    }
    std::cout << bills << "\n";
}
