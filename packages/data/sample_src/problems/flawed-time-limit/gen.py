"""Tests for flawed-time-limit. The dataset row stores time_limit = 0 s on purpose
(the solutions are verified with 1 s)."""

import random


def generate(rng: random.Random) -> dict[str, list[str]]:
    values = [2, 3, 10**9, 10**9 - 1] + [rng.randint(1, 10**9) for _ in range(3)]
    return {"public": ["6\n", "1\n"], "private": [f"{v}\n" for v in values]}
