// Computes count(R) - count(L) instead of count(R) - count(L - 1): drops L itself.
#include <bits/stdc++.h>
typedef long long ll;
int K;
ll countUpTo(ll n) {
    std::string s = std::to_string(n);
    int tightSum = 0;
    std::vector<ll> cur(K, 0);
    for (char ch : s) {
        int d = ch - '0';
        std::vector<ll> nxt(K, 0);
        for (int r = 0; r < K; r++)
            if (cur[r])
                for (int x = 0; x <= 9; x++) nxt[(r + x) % K] += cur[r];
        for (int x = 0; x < d; x++) nxt[(tightSum + x) % K] += 1;
        tightSum = (tightSum + d) % K;
        cur = nxt;
    }
    return cur[0] + (tightSum == 0 ? 1 : 0);
}
int main() {
    ll L, R;
    std::scanf("%lld %lld %d", &L, &R, &K);
    std::printf("%lld\n", countUpTo(R) - countUpTo(L));
}
