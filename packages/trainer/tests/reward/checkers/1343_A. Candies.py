import sys
from pathlib import Path


def check(inp: list[str], out: list[str]) -> bool:
    t = int(inp[0])
    if len(out) != t:
        return False
    for i in range(t):
        n, x = int(inp[1 + i]), int(out[i])
        if x < 1 or n % x:
            return False
        m = n // x + 1  # must be 2^k with k > 1
        if m < 4 or m & (m - 1):
            return False
    return True


inp, out = (Path(p).read_text().split() for p in sys.argv[1:3])
try:
    ok = check(inp, out)
except (ValueError, IndexError):
    ok = False
sys.exit(0 if ok else 1)
