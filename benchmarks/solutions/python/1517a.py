t = int(input())
for _ in range(t):
    n = int(input())
    print(-1 if n % 2050 else sum(map(int, str(n // 2050))))
