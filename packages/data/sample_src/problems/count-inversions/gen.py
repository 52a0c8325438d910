"""Tests for count-inversions: one reversed shelf of 70 000 books has more than 2^31 pairs."""

import random


def _case(a: list[int]) -> str:
    return f"{len(a)}\n{' '.join(map(str, a))}\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([2, 4, 1, 3, 5]), _case([7, 7, 7, 7])]
    private = [_case([1]), _case([2, 1]), _case([3, 3, 1, 1]), _case(list(range(70000, 0, -1)))]
    for k in range(4):
        n = rng.randint(1, 30 if k < 2 else 20000)
        private.append(_case([rng.randint(1, 5 if k % 2 else 10**9) for _ in range(n)]))
    return {"public": public, "private": private}
