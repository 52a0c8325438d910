n, k = map(int, input().split())
is_prime = [True] * (n + 1)
is_prime[0] = is_prime[1] = False
for i in range(2, n + 1):
    if is_prime[i]:
        for j in range(i * i, n + 1, i):
            is_prime[j] = False
primes = [p for p in range(2, n + 1) if is_prime[p]]
count = 0
for a, b in zip(primes, primes[1:]):
    if a + b + 1 <= n and is_prime[a + b + 1]:
        count += 1
print("YES" if count >= k else "NO")
