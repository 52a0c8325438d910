"""Tests for max-minus-min: random arrays, all-negative arrays, extremes."""

import random


def _case(a: list[int]) -> str:
    return f"{len(a)}\n{' '.join(map(str, a))}\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([3, -1, 4, 1, 5]), _case([-7, -2, -9])]
    private = [_case([42]), _case([-(10**9), 10**9]), _case([-5] * 10)]
    for k in range(6):
        n = rng.randint(1, 2000)
        lo, hi = (-(10**9), -1) if k % 2 else (-(10**9), 10**9)
        private.append(_case([rng.randint(lo, hi) for _ in range(n)]))
    return {"public": public, "private": private}
