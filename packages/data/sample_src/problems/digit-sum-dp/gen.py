"""Tests for digit-sum-dp: boundaries that are themselves balanced (off-by-one traps)."""

import random


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = ["1 20 5\n", "100 100 1\n"]
    cases = [
        (1, 1, 1),
        (5, 5, 5),
        (19, 19, 10),
        (1, 10**18, 1),
        (1, 10**18, 200),
        (999999999999999999, 10**18, 9),
    ]
    for k in range(5):
        lo = rng.randint(1, 10**3 if k < 2 else 10**18)
        hi = rng.randint(lo, min(10**18, lo * 10 + 1000))
        cases.append((lo, hi, rng.randint(1, 12 if k < 3 else 200)))
    return {"public": public, "private": [f"{a} {b} {c}\n" for a, b, c in cases]}
