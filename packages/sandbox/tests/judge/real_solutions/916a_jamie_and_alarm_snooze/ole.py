import sys

x, hh, mm = map(int, open(0).read().split())
line = f"{x}\n" * 100_000
while True:  # prints the answer forever: stopped at the output limit
    sys.stdout.write(line)
