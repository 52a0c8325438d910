import sys
from pathlib import Path


def check(inp: list[str], out: list[str]) -> bool:
    t, pos = int(inp[0]), 0
    for i in range(t):
        n = int(inp[1 + i])
        possible = n not in (1, 2, 4)
        if out[pos] == "-1":
            if possible:
                return False
            pos += 1
            continue
        a, b, c = map(int, out[pos : pos + 3])
        pos += 3
        if min(a, b, c) < 0 or 3 * a + 5 * b + 7 * c != n:
            return False
    return pos == len(out)


inp, out = (Path(p).read_text().split() for p in sys.argv[1:3])
try:
    ok = check(inp, out)
except (ValueError, IndexError):
    ok = False
sys.exit(0 if ok else 1)
