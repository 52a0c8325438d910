#include <cstdio>
int main() {
    unsigned long long n;
    std::scanf("%llu", &n);
    std::printf("%d\n", __builtin_popcountll(n));
}
