t = int(input())
for _ in range(t):
    input()
    s = input().strip()
    seen = set()
    ok = True
    for i, c in enumerate(s):
        if c in seen and s[i - 1] != c:
            ok = False
        seen.add(c)
    print("YES" if ok else "NO")
