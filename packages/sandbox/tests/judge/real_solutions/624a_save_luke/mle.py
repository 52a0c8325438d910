d, length, v1, v2 = map(int, input().split())
positions = []
step = 0
while True:  # simulates every nanosecond: the list grows past the memory limit
    positions.append(step * 1.5)
    step += 1
