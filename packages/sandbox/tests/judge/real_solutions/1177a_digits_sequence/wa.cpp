#include <bits/stdc++.h>
using namespace std;

int main() {
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
    cout << digits[k % len] << "\n";
    return 0;
}
