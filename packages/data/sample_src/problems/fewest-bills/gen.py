"""Tests for fewest-bills: every n up to 300, then random large n."""

import random


def _case(ns: list[int]) -> str:
    return f"{len(ns)}\n" + "\n".join(map(str, ns)) + "\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([125, 43, 10**9])]
    private = [_case(list(range(1, 301))), _case([40]), _case([99, 98, 97])]
    for _ in range(4):
        private.append(_case([rng.randint(1, 10**9) for _ in range(rng.randint(1, 1000))]))
    return {"public": public, "private": private}
