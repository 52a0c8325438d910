"""Tests for atcoder-digit-sum (a non-Codeforces problem; the pipeline excludes it by default)."""

import random


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = ["12345\n", "1000000000000000000\n"]
    values = [1, 9, 999999999999999999, 2147483648]
    values += [rng.randint(1, 10**18) for _ in range(3)]
    return {"public": public, "private": [f"{v}\n" for v in values]}
