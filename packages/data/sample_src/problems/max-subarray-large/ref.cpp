#include <bits/stdc++.h>
static char buf[1 << 25];
int main() {
    size_t len = fread(buf, 1, sizeof(buf) - 1, stdin);
    buf[len] = 0;
    char* p = buf;
    auto next = [&]() {
        while (*p && *p != '-' && (*p < '0' || *p > '9')) p++;
        bool neg = *p == '-';
        if (neg) p++;
        long long v = 0;
        while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
        return neg ? -v : v;
    };
    long long n = next();
    long long best = LLONG_MIN, cur = 0;
    for (long long i = 0; i < n; i++) {
        long long x = next();
        cur = std::max(x, cur + x);
        best = std::max(best, cur);
    }
    printf("%lld\n", best);
}
