import sys
from pathlib import Path


def check(inp: list[str], out: list[str]) -> bool:
    t, pos = int(inp[0]), 0
    for i in range(t):
        n = int(inp[1 + i])
        a = list(map(int, out[pos : pos + n]))
        pos += n
        if len(a) != n or not all(1 <= v <= 1000 for v in a):
            return False
        present = set(a)
        if any(x + y in present for x in present for y in present):
            return False
    return pos == len(out)


inp, out = (Path(p).read_text().split() for p in sys.argv[1:3])
try:
    ok = check(inp, out)
except (ValueError, IndexError):
    ok = False
sys.exit(0 if ok else 1)
