n = int(input())
# Memoises every fraction for 10^8 opponents: a dict far over the memory limit.
memo = {s: 1 / s for s in range(1, 100_000_001)}
print("%.12f" % sum(memo[s] for s in range(1, n + 1)))
