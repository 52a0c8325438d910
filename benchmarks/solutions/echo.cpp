#include <cstdio>
// Trivial program for the per-test overhead measurement.
int main() {
    long long x;
    if (scanf("%lld", &x) == 1) printf("%lld\n", x);
    return 0;
}
