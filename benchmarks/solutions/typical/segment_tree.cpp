#include <bits/stdc++.h>
using namespace std;
// Point updates and range minimum queries.
template <typename T>
struct SegTree {
    int n;
    vector<T> t;
    explicit SegTree(const vector<T>& a) : n(a.size()), t(2 * a.size()) {
        for (int i = 0; i < n; ++i) t[n + i] = a[i];
        for (int i = n - 1; i > 0; --i) t[i] = min(t[2 * i], t[2 * i + 1]);
    }
    void update(int p, T v) {
        for (t[p += n] = v; p > 1; p >>= 1) t[p >> 1] = min(t[p], t[p ^ 1]);
    }
    T query(int l, int r) {  // [l, r)
        T res = numeric_limits<T>::max();
        for (l += n, r += n; l < r; l >>= 1, r >>= 1) {
            if (l & 1) res = min(res, t[l++]);
            if (r & 1) res = min(res, t[--r]);
        }
        return res;
    }
};
int main() {
    int n, q;
    cin >> n >> q;
    vector<long long> a(n);
    for (auto& x : a) cin >> x;
    SegTree<long long> st(a);
    while (q--) {
        char op;
        long long x, y;
        cin >> op >> x >> y;
        if (op == 'u') st.update(x - 1, y);
        else cout << st.query(x - 1, y) << '\n';
    }
}
