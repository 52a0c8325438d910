# Forgets that both parts must be positive: answers YES for n = 2.
import sys

data = sys.stdin.read().split()
t = int(data[0])
for n in map(int, data[1 : t + 1]):
    print("YES" if n % 2 == 0 else "NO")
