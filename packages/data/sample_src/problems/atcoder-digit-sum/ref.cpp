#include <iostream>
#include <string>
int main() {
    std::string n;
    std::cin >> n;
    int s = 0;
    for (char c : n) s += c - '0';
    std::cout << s << "\n";
}
