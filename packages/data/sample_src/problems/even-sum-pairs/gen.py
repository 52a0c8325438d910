"""Tests for even-sum-pairs; the largest answer (~2e10) overflows 32-bit integers."""

import random


def _case(a: list[int]) -> str:
    return f"{len(a)}\n{' '.join(map(str, a))}\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([1, 2, 3, 4]), _case([5, 7, 9])]
    private = [_case([1]), _case([2, 4]), _case([1, 2])]
    for _k in range(4):
        n = rng.randint(2, 1000)
        private.append(_case([rng.randint(1, 10**9) for _ in range(n)]))
    private.append(_case([rng.choice([2, 4, 6, 8]) for _ in range(70000)]))
    return {"public": public, "private": private}
