x, hh, mm = map(int, open(0).read().split())
if x > 0
    print(x)
