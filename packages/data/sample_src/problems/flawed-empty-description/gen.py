"""Tests for flawed-empty-description. The dataset row has an empty description on purpose."""

import random


def generate(rng: random.Random) -> dict[str, list[str]]:
    values = [0, 1, 2**62, 10**18, 2**59 - 1] + [rng.randint(0, 10**18) for _ in range(3)]
    return {"public": ["5\n"], "private": [f"{v}\n" for v in values]}
