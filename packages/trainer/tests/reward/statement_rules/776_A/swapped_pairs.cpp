#include <bits/stdc++.h>
int main() {
    std::string a, b; int n; std::cin >> a >> b >> n;
    std::cout << b << " " << a << "\n";
    for (int i = 0; i < n; i++) {
        std::string killed, fresh; std::cin >> killed >> fresh;
        (killed == a ? a : b) = fresh;
        std::cout << b << " " << a << "\n";
    }
}
