"""Tests for bitmask-tsp: random matrices where the nearest-neighbour tour is not optimal."""

import random


def _case(d: list[list[int]]) -> str:
    return f"{len(d)}\n" + "".join(" ".join(map(str, row)) + "\n" for row in d)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [
        _case([[0, 1, 15, 6], [2, 0, 7, 3], [9, 6, 0, 12], [10, 4, 8, 0]]),
        _case([[0, 5], [7, 0]]),
    ]
    private = [_case([[0, 0], [0, 0]])]
    for n, hi in [(3, 10), (5, 20), (8, 100), (12, 10**6), (15, 1000), (16, 10**6), (16, 10)]:
        private.append(
            _case([[0 if i == j else rng.randint(0, hi) for j in range(n)] for i in range(n)])
        )
    generated = [
        _case([[0, 1, 15, 6], [2, 0, 7, 3], [9, 6, 0, 12 - d], [10, 4 - d, 8, 0]]) for d in (1, 2)
    ]
    return {"public": public, "private": private, "generated": generated}
