"""Tests for stairs-steps: small n, multiples of 5 and values near 10^18."""

import random


def _case(ns: list[int]) -> str:
    return f"{len(ns)}\n" + "\n".join(map(str, ns)) + "\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([5, 12, 1])]
    private = [_case(list(range(1, 21))), _case([10**18, 10**18 - 1, 999999999999999996])]
    for k in range(5):
        hi = 100 if k < 2 else 10**18
        private.append(_case([rng.randint(1, hi) for _ in range(rng.randint(1, 500))]))
    return {"public": public, "private": private}
