"""Tests for fib-matrix: huge n (the linear recurrence times out)."""

import random


def _case(ns: list[int]) -> str:
    return f"{len(ns)}\n" + "\n".join(map(str, ns)) + "\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([0, 1, 10, 100])]
    private = [_case(list(range(0, 60))), _case([10**18, 10**18 - 1, 2 * 10**9 + 16])]
    for k in range(5):
        hi = 10**6 if k < 2 else 10**18
        private.append(_case([rng.randint(0, hi) for _ in range(rng.randint(1, 1000))]))
    return {"public": public, "private": private}
