t = int(input())
for _ in range(t):
    n = int(input())
    total = n * (n + 1) // 2
    power = 1
    while power <= n:
        total -= 2 * power
        power *= 2
    print(total)
