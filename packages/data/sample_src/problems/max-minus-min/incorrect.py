# Starts the maximum at 0, so an all-negative day gives a wrong range.
import sys

data = sys.stdin.read().split()
n = int(data[0])
xs = list(map(int, data[1 : n + 1]))
print(max([0, *xs]) - min(xs))
