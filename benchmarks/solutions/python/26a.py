n = int(input())
count = 0
for v in range(1, n + 1):
    m, primes, d = v, 0, 2
    while d * d <= m:
        if m % d == 0:
            primes += 1
            while m % d == 0:
                m //= d
        d += 1
    if m > 1:
        primes += 1
    if primes == 2:
        count += 1
print(count)
