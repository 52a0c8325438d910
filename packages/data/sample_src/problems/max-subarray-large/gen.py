"""Tests for max-subarray-large. One private test is the dataset's large input (~1 MB, n = 100 000)
that makes the quadratic solution time out."""

import random


def _case(a: list[int]) -> str:
    return f"{len(a)}\n{' '.join(map(str, a))}\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([-2, 5, -1, 3, -7, 4]), _case([-5, -1, -8])]
    private = [_case([7]), _case([-(10**9)]), _case([10**9] * 5)]
    for _ in range(4):
        n = rng.randint(1, 300)
        private.append(_case([rng.randint(-100, 60) for _ in range(n)]))
    private.append(_case([rng.randint(-(10**9), 10**9) for _ in range(100000)]))
    return {"public": public, "private": private}
