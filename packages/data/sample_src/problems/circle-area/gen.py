"""Tests for circle-area (float answers, 1e-6 tolerance)."""

import random


def _case(pairs: list[tuple[int, int]]) -> str:
    return f"{len(pairs)}\n" + "".join(f"{a} {b}\n" for a, b in pairs)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([(1, 2), (3, 5)])]
    private = [_case([(9999, 10000), (1, 10000)])]
    for k in range(6):
        hi = 10 if k < 2 else 10000
        pairs = []
        for _ in range(rng.randint(1, 300)):
            r = rng.randint(1, hi - 1)
            pairs.append((r, rng.randint(r + 1, hi)))
        private.append(_case(pairs))
    return {"public": public, "private": private}
