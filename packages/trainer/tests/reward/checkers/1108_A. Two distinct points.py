import sys
from pathlib import Path


def check(inp: list[str], out: list[str]) -> bool:
    q = int(inp[0])
    if len(out) != 2 * q:
        return False
    for i in range(q):
        l1, r1, l2, r2 = map(int, inp[1 + 4 * i : 5 + 4 * i])
        a, b = int(out[2 * i]), int(out[2 * i + 1])
        if not (l1 <= a <= r1 and l2 <= b <= r2 and a != b):
            return False
    return True


inp, out = (Path(p).read_text().split() for p in sys.argv[1:3])
try:
    ok = check(inp, out)
except (ValueError, IndexError):
    ok = False
sys.exit(0 if ok else 1)
