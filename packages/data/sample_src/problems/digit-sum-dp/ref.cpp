#include <bits/stdc++.h>
typedef long long ll;
int K;
// count of x in [0, n] whose digit sum is divisible by K
ll countUpTo(ll n) {
    if (n < 0) return 0;
    std::string s = std::to_string(n);
    int tightSum = 0;
    std::vector<ll> cur(K, 0);
    // cur[r]: numbers already strictly below n's prefix, with digit-sum residue r
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
    return cur[0] + (tightSum == 0 ? 1 : 0);  // includes 0, whose digit sum 0 is divisible
}
int main() {
    ll L, R;
    std::scanf("%lld %lld %d", &L, &R, &K);
    std::printf("%lld\n", countUpTo(R) - countUpTo(L - 1));
}
