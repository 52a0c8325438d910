"""Tests for aizu-gcd-lcm (a non-Codeforces problem; excluded by default)."""

import math
import random


def _pair(rng: random.Random) -> tuple[int, int]:
    while True:
        g = rng.randint(1, 1000)
        a, b = g * rng.randint(1, 50000), g * rng.randint(1, 50000)
        if a <= 2 * 10**9 and b <= 2 * 10**9 and a * b // math.gcd(a, b) <= 2 * 10**9:
            return a, b


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = ["8 6\n50000000 30000000\n"]
    private = ["1 1\n", "2000000000 2000000000\n1 2000000000\n", "1999999973 1\n"]
    for _ in range(4):
        private.append("".join("{} {}\n".format(*_pair(rng)) for _ in range(rng.randint(1, 50))))
    return {"public": public, "private": private}
