"""Tests for lis-strict: many repeated values (non-strict LIS differs)."""

import random


def _case(a: list[int]) -> str:
    return f"{len(a)}\n{' '.join(map(str, a))}\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([3, 1, 4, 1, 5, 9, 2, 6]), _case([2, 2, 2, 2])]
    private = [
        _case([1]),
        _case(list(range(1, 1001))),
        _case(list(range(1000, 0, -1))),
        _case([1, 1, 2, 2, 3, 3]),
    ]
    for k in range(5):
        n = rng.randint(1, 30 if k < 2 else 20000)
        private.append(_case([rng.randint(1, 10 if k % 2 else 10**9) for _ in range(n)]))
    return {"public": public, "private": private}
