#include <bits/stdc++.h>
using namespace std;
// Most frequent word (ties: lexicographically smallest).
int main() {
    ios_base::sync_with_stdio(false);
    int n;
    cin >> n;
    unordered_map<string, int> freq;
    map<int, set<string>> byCount;
    for (int i = 0; i < n; ++i) {
        string w;
        cin >> w;
        ++freq[w];
    }
    for (auto& [w, c] : freq) byCount[c].insert(w);
    auto& top = byCount.rbegin()->second;
    cout << *top.begin() << " " << byCount.rbegin()->first << "\n";
}
