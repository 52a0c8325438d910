"""Tests for most-frequent-any. Several answers can be valid: ``check`` accepts any of them.

The dataset stores the reference's answer (the smallest most frequent book); ref_largest.cpp
prints the largest one, so the two accepted solutions disagree on tests with ties.
"""

import random
from collections import Counter


def _case(a: list[int]) -> str:
    return f"{len(a)}\n{' '.join(map(str, a))}\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([4, 2, 4, 7, 2, 4]), _case([5, 3, 3, 5])]
    private = [_case([1]), _case([10**9, 1]), _case([9, 9, 8, 8, 7, 7])]
    for k in range(5):
        n = rng.randint(1, 20 if k < 2 else 2000)
        a = [rng.randint(1, 10 if k % 2 else 10**9) for _ in range(n)]
        private.append(_case(a))
    return {"public": public, "private": private}


def check(inp: str, out: str) -> bool:
    """Accept any book with the maximum number of borrowings."""
    a = inp.split()[1:]
    toks = out.split()
    if len(toks) != 1:
        return False
    c = Counter(a)
    return c.get(toks[0], 0) == max(c.values())
