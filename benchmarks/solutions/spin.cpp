#include <bits/stdc++.h>
using namespace std;
// Burns a given number of loop iterations of CPU, then answers: for TLE-borderline runs.
int main() {
    long long n;
    cin >> n;
    volatile unsigned long long acc = 0;
    for (long long i = 0; i < n; ++i) acc += i ^ (acc >> 3);
    cout << "done" << endl;
}
