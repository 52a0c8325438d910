#include <bits/stdc++.h>
using namespace std;

int main() {
    // Allocates and touches 1 MiB blocks without ever freeing them.
    vector<char*> blocks;
    for (int i = 0; i < 4096; ++i) {
        char* block = new char[1 << 20];
        memset(block, i, 1 << 20);
        blocks.push_back(block);
    }
    if (blocks.back()[5] == 1) return 1;
    long long n;
    cin >> n;
    long long p = 1;
    while (p * 10 <= n) p *= 10;
    long long d = n / p;
    cout << (d + 1) * p - n << "\n";
    return 0;
}
