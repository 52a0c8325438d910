k = int(input())
length, count, start = 1, 9, 1
while k > length * count:
    k -= length * count
    length, count, start = length + 1, count * 10, start * 10
number = start + (k - 1) // length
print(str(number)[(k - 1) % length])
