x, hh, mm = map(int, open(0).read().split())
y = 0
while True:  # forgot the exit test: spins until the CPU limit
    y += x
print(y)
