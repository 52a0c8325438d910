import sys
from pathlib import Path


def check(inp: list[str], out: list[str]) -> bool:
    da, db = inp[0], inp[1]
    possible = int(db) == int(da) or int(db) == int(da) + 1 or (da == "9" and db == "1")
    if out == ["-1"]:
        return not possible
    if len(out) != 2:
        return False
    a, b = int(out[0]), int(out[1])
    return 1 <= a <= 10**9 and b == a + 1 and b <= 10**9 and str(a)[0] == da and str(b)[0] == db


inp, out = (Path(p).read_text().split() for p in sys.argv[1:3])
try:
    ok = check(inp, out)
except (ValueError, IndexError):
    ok = False
sys.exit(0 if ok else 1)
