// Sums all numbers instead of the odd ones.
#include <cstdio>
int main() {
    long long n;
    std::scanf("%lld", &n);
    std::printf("%lld\n", n * (n + 1) / 2);
}
