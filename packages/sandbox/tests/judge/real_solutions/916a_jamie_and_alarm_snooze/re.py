x, hh, mm = map(int, open(0).read().split())
print(hh // (x - x))  # ZeroDivisionError
