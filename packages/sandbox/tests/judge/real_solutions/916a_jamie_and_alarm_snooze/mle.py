x, hh, mm = map(int, open(0).read().split())
# A table of every minute for 10^9 snoozes: far over the 256 MB limit (filled pages).
table = b"\x01" * (2 << 30)
print(len(table))
