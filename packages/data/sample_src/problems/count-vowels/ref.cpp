#include <bits/stdc++.h>
int main() {
    std::string s;
    std::cin >> s;
    const std::string v = "aeiouy";
    long long c = 0;
    for (char ch : s) c += v.find(ch) != std::string::npos;
    std::cout << c << "\n";
}
