s = input().strip()
print(sum(c in "aeiouy" for c in s))
