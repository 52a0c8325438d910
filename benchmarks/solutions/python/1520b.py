t = int(input())
for _ in range(t):
    n = int(input())
    count = 0
    for length in range(1, 11):
        for digit in range(1, 10):
            if int(str(digit) * length) <= n:
                count += 1
    print(count)
