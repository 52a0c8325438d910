#include <bits/stdc++.h>
using namespace std;

int main() {
    // Indexes a small heap array far out of bounds: SIGSEGV.
    vector<int> small(10);
    volatile long long far = 1LL << 40;
    small.data()[far] = 1;
    long long k;
    cin >> k;
    long long len = 1, cnt = 9, start = 1;
    while (k > len * cnt) {
        k -= len * cnt;
        ++len;
        cnt *= 10;
        start *= 10;
    }
    long long number = start + (k - 1) / len;
    string digits = to_string(number);
    cout << digits[(k - 1) % len] << "\n";
    return 0;
}
