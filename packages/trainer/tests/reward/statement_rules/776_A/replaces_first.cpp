#include <bits/stdc++.h>
int main() {
    std::string a, b; int n; std::cin >> a >> b >> n;
    std::cout << a << " " << b << "\n";
    for (int i = 0; i < n; i++) {
        std::string killed, fresh; std::cin >> killed >> fresh;
        a = fresh;  // always replaces the first name, whoever was killed
        std::cout << a << " " << b << "\n";
    }
}
