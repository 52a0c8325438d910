n = int(input())
print("%.12f" % sum(1 / s for s in range(1, n + 1)))
