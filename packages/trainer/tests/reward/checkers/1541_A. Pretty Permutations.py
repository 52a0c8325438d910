import sys
from pathlib import Path


def check(inp: list[str], out: list[str]) -> bool:
    t, pos = int(inp[0]), 0
    for i in range(t):
        n = int(inp[1 + i])
        p = list(map(int, out[pos : pos + n]))
        pos += n
        if len(p) != n or sorted(p) != list(range(1, n + 1)):
            return False
        if any(v == j + 1 for j, v in enumerate(p)):
            return False
        if sum(abs(v - (j + 1)) for j, v in enumerate(p)) != (n if n % 2 == 0 else n + 1):
            return False
    return pos == len(out)


inp, out = (Path(p).read_text().split() for p in sys.argv[1:3])
try:
    ok = check(inp, out)
except (ValueError, IndexError):
    ok = False
sys.exit(0 if ok else 1)
