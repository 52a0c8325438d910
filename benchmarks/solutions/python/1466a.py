t = int(input())
for _ in range(t):
    n = int(input())
    x = list(map(int, input().split()))
    print(len({x[j] - x[i] for i in range(n) for j in range(i + 1, n)}))
