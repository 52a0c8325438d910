import sys

data = sys.stdin.read().split()
t = int(data[0])
out = []
for i in range(t):
    n, k = int(data[1 + 2 * i]), int(data[2 + 2 * i])
    f, d = n, 2
    while d * d <= n:
        if n % d == 0:
            f = d
            break
        d += 1
    out.append(n + f + 2 * (k - 1))
print("\n".join(map(str, out)))
