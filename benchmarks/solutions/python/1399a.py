t = int(input())
for _ in range(t):
    input()
    a = sorted(map(int, input().split()))
    ok = all(a[i + 1] - a[i] <= 1 for i in range(len(a) - 1))
    print("YES" if ok else "NO")
