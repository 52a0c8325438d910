d, length, v1, v2 = map(int, input().split())
block = "%.15f\n" % ((length - d) / (v1 + v2)) * 10_000
while True:  # the answer, forever (printed 10^4 lines at a time)
    print(block, end="")
