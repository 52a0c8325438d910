"""Tests for divisor-sum-floor: small n, squares, n up to 10^12 (a linear loop times out)."""

import random


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = ["5\n", "10\n"]
    values = [1, 2, 3, 16, 999999999999, 10**12, 10**6 * 10**6 - 1, 999983 * 999983]
    values += [rng.randint(1, 10**4), rng.randint(10**9, 10**12), rng.randint(10**11, 10**12)]
    return {"public": public, "private": [f"{v}\n" for v in values]}
