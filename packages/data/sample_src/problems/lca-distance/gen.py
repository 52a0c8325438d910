"""Tests for lca-distance: random trees and long paths (depth > 1024)."""

import random


def _case(rng: random.Random, parent: list[int], q: int) -> str:
    n = len(parent) + 1
    perm = [1, *rng.sample(range(2, n + 1), n - 1)]  # relabel, keeping the capital as 1
    p = [0] * (n + 1)
    for i, par in enumerate(parent, start=2):
        p[perm[i - 1]] = perm[par - 1]
    qs = [(rng.randint(1, n), rng.randint(1, n)) for _ in range(q)]
    return f"{n} {q}\n{' '.join(map(str, p[2:]))}\n" + "".join(f"{u} {v}\n" for u, v in qs)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = ["5 3\n1 1 2 2\n4 5\n4 3\n1 1\n"]
    private = ["2 2\n1\n1 2\n2 2\n"]
    for n, q in [(8, 10), (100, 100), (3000, 2000)]:
        private.append(_case(rng, [rng.randint(1, i - 1) for i in range(2, n + 1)], q))
    private.append(_case(rng, [i - 1 for i in range(2, 5001)], 2000))  # a path
    private.append(_case(rng, [max(1, i - rng.randint(1, 3)) for i in range(2, 6001)], 2000))
    return {"public": public, "private": private}
