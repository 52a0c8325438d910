// Prints the boxes rounded up instead of the full boxes.
#include <cstdio>
int main() {
    int t;
    std::scanf("%d", &t);
    while (t--) {
        long long n, k;
        std::scanf("%lld %lld", &n, &k);
        std::printf("%lld %lld\n", (n + k - 1) / k, n % k);
    }
}
