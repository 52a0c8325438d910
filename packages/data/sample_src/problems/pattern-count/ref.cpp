#include <bits/stdc++.h>
int main() {
    std::string s, p;
    std::cin >> s >> p;
    std::string t = p + '#' + s;
    std::vector<int> pi(t.size(), 0);  // prefix function
    long long cnt = 0;
    for (size_t i = 1; i < t.size(); i++) {
        int k = pi[i - 1];
        while (k > 0 && t[i] != t[k]) k = pi[k - 1];
        if (t[i] == t[k]) k++;
        pi[i] = k;
        if (k == (int)p.size()) cnt++;
    }
    std::cout << cnt << "\n";
}
