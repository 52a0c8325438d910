import sys
from pathlib import Path


def check(inp: list[str], out: list[str]) -> bool:
    if len(out) != 3:
        return False
    a, b, c = map(int, out)
    if min(a, b, c) < 1:
        return False
    return sorted([a + b, a + c, b + c, a + b + c]) == sorted(map(int, inp[:4]))


inp, out = (Path(p).read_text().split() for p in sys.argv[1:3])
try:
    ok = check(inp, out)
except (ValueError, IndexError):
    ok = False
sys.exit(0 if ok else 1)
