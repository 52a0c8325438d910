n = int(input())
prize = 0.0
s = n
while s >= 1:  # never decremented
    prize += 1 / s
print(prize)
