import sys

n = int(input())
chunk = str(n) * (1 << 20)
for _ in range(1 << 14):  # 64 GiB in 4 MiB writes: stopped at the output limit
    sys.stdout.write(chunk)
