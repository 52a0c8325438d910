#include <bits/stdc++.h>
int main() {
    int n; std::string s; std::cin >> n >> s;
    if (std::count(s.begin(), s.end(), '0') * 2 != n) std::cout << 1 << "\n" << s << "\n";
    else std::cout << 2 << "\n" << s.substr(0, n - 1) << " " << s.substr(n - 1) << "\n";  // cut last
}
