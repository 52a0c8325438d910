n = int(input())
prize = 0.0
for s in range(n, 0, -1):
    prize += 1.0 / s
print("%.12f" % prize)
