n = int(input())
print "%.12f" % sum(1.0 / s for s in range(1, n + 1))
