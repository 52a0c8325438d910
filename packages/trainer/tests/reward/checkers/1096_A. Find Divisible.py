import sys
from pathlib import Path


def check(inp: list[str], out: list[str]) -> bool:
    t = int(inp[0])
    if len(out) != 2 * t:
        return False
    for i in range(t):
        lo, hi = int(inp[1 + 2 * i]), int(inp[2 + 2 * i])
        x, y = int(out[2 * i]), int(out[2 * i + 1])
        if not (lo <= x <= hi and lo <= y <= hi and x != y and y % x == 0):
            return False
    return True


inp, out = (Path(p).read_text().split() for p in sys.argv[1:3])
try:
    ok = check(inp, out)
except (ValueError, IndexError, ZeroDivisionError):
    ok = False
sys.exit(0 if ok else 1)
