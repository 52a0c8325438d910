"""Tests for second-largest-distinct: ties at the top, single values, random arrays."""

import random


def _case(a: list[int]) -> str:
    return f"{len(a)}\n{' '.join(map(str, a))}\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([10, 20, 20, 5, 10]), _case([7, 7, 7])]
    private = [_case([5]), _case([0, 10**9]), _case([9, 9, 8]), _case([3, 1, 2])]
    for k in range(4):
        n = rng.randint(1, 50 if k < 2 else 2000)
        a = [rng.randint(0, 5 if k % 2 else 10**9) for _ in range(n)]
        top = max(a)
        a += [top] * rng.randint(0, 3)
        rng.shuffle(a)
        private.append(_case(a))
    return {"public": public, "private": private}
