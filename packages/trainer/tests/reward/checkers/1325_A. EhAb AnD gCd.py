import math
import sys
from pathlib import Path


def check(inp: list[str], out: list[str]) -> bool:
    t = int(inp[0])
    if len(out) != 2 * t:
        return False
    for i in range(t):
        x = int(inp[1 + i])
        a, b = int(out[2 * i]), int(out[2 * i + 1])
        if not (1 <= a <= 10**9 and 1 <= b <= 10**9):
            return False
        g = math.gcd(a, b)
        if g + a * b // g != x:
            return False
    return True


inp, out = (Path(p).read_text().split() for p in sys.argv[1:3])
try:
    ok = check(inp, out)
except (ValueError, IndexError):
    ok = False
sys.exit(0 if ok else 1)
