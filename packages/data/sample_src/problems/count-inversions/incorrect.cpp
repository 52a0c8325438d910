// Merge-sort count in a 32-bit int: overflows past 2^31 disorders.
#include <bits/stdc++.h>
std::vector<int> a, tmp;
int inv = 0;
void sortCount(int l, int r) {
    if (r - l < 2) return;
    int mid = (l + r) / 2;
    sortCount(l, mid);
    sortCount(mid, r);
    int i = l, j = mid, k = l;
    while (i < mid || j < r) {
        if (j == r || (i < mid && a[i] <= a[j])) tmp[k++] = a[i++];
        else { inv += mid - i; tmp[k++] = a[j++]; }
    }
    for (int t = l; t < r; t++) a[t] = tmp[t];
}
int main() {
    int n;
    std::scanf("%d", &n);
    a.resize(n);
    tmp.resize(n);
    for (auto& x : a) std::scanf("%d", &x);
    sortCount(0, n);
    std::printf("%d\n", inv);
}
