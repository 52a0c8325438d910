// Squares in 32-bit arithmetic.
#include <cstdio>
int main() {
    int n;
    std::scanf("%d", &n);
    std::printf("%d\n", n * n);
}
