import sys
from pathlib import Path


def check(inp: list[str], out: list[str]) -> bool:
    n = int(inp[0])
    if n % 2 == 1:
        return out == ["-1"]
    p = list(map(int, out))
    if len(p) != n or sorted(p) != list(range(1, n + 1)):
        return False
    return all(p[p[i] - 1] == i + 1 and p[i] != i + 1 for i in range(n))


inp, out = (Path(p).read_text().split() for p in sys.argv[1:3])
try:
    ok = check(inp, out)
except (ValueError, IndexError):
    ok = False
sys.exit(0 if ok else 1)
