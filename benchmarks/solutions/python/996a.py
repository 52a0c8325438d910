n = int(input())
bills = 0
for value in (100, 20, 10, 5, 1):
    bills += n // value
    n %= value
print(bills)
