import sys

data = sys.stdin.read().split()
n = int(data[0])
xs = list(map(int, data[1 : n + 1]))
print(max(xs) - min(xs))
