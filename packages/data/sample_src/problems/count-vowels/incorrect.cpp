// Uses the English vowels only and forgets that y is a vowel in Vowelia.
#include <bits/stdc++.h>
int main() {
    std::string s;
    std::cin >> s;
    const std::string v = "aeiou";
    long long c = 0;
    for (char ch : s) c += v.find(ch) != std::string::npos;
    std::cout << c << "\n";
}
