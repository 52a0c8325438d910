import time

d, length, v1, v2 = map(int, input().split())
time.sleep(3600)  # sleeps: only the wall-clock backstop ends it
print((length - d) / (v1 + v2))
