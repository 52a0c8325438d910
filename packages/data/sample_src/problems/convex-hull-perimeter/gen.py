"""Tests for convex-hull-perimeter (float answers).

Duplicates, collinear points, large coordinates.
"""

import random


def _case(pts: list[tuple[int, int]]) -> str:
    return f"{len(pts)}\n" + "".join(f"{x} {y}\n" for x, y in pts)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([(0, 0), (4, 0), (4, 3), (0, 3), (2, 1)]), _case([(0, 0), (1, 1), (2, 2)])]
    private = [
        _case([(5, 5)]),
        _case([(1, 2), (1, 2), (1, 2)]),
        _case([(-(10**9), -(10**9)), (10**9, 10**9), (10**9, -(10**9))]),
    ]
    private.append(_case([(0, 0), (10, 0), (5, 0), (10, 10), (0, 10), (5, 10), (5, 5)]))
    for k in range(5):
        n = rng.randint(1, 10 if k < 2 else 5000)
        c = 20 if k % 2 else 10**9
        private.append(_case([(rng.randint(-c, c), rng.randint(-c, c)) for _ in range(n)]))
    return {"public": public, "private": private}
