#include <cstdio>
int main() {
    long long n;
    std::scanf("%lld", &n);
    long long k = (n + 1) / 2;  // number of odd terms
    std::printf("%lld\n", k * k);
}
