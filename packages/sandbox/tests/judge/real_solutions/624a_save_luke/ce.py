d, length, v1, v2 = map(int, input().split())
def answer():
return (length - d) / (v1 + v2)
print(answer())
