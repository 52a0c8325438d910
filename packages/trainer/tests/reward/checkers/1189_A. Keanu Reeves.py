import sys
from pathlib import Path


def good(s: str) -> bool:
    return s.count("0") != s.count("1")


def check(inp: list[str], out: list[str]) -> bool:
    s = inp[1]
    k = int(out[0])
    parts = out[1:]
    if k != len(parts) or k != (1 if good(s) else 2):
        return False
    return "".join(parts) == s and all(p and good(p) for p in parts)


inp, out = (Path(p).read_text().split() for p in sys.argv[1:3])
try:
    ok = check(inp, out)
except (ValueError, IndexError):
    ok = False
sys.exit(0 if ok else 1)
