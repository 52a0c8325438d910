"""Tests for max-flow: graphs where a path found first must later be partly undone."""

import random


def _case(n: int, edges: list[tuple[int, int, int]]) -> str:
    return f"{n} {len(edges)}\n" + "".join(f"{u} {v} {c}\n" for u, v, c in edges)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [
        _case(4, [(1, 2, 3), (1, 3, 2), (2, 3, 5), (2, 4, 2), (3, 4, 3)]),
        _case(3, [(1, 2, 10)]),
    ]
    # The classic trap: the first path 1-2-3-4 blocks both 1-3 and 2-4 unless flow is pushed back.
    private = [
        _case(4, [(1, 2, 1), (2, 3, 1), (3, 4, 1), (1, 3, 1), (2, 4, 1)]),
        _case(2, [(1, 2, 10**9)] * 3),
    ]
    for n, m, c in [
        (6, 12, 5),
        (10, 30, 20),
        (50, 300, 1000),
        (200, 2000, 10**9),
        (500, 5000, 10**6),
    ]:
        edges = []
        for _ in range(m):
            u, v = rng.sample(range(1, n + 1), 2)
            edges.append((u, v, rng.randint(1, c)))
        private.append(_case(n, edges))
    for k in (30, 150):  # unit-capacity bipartite matching: greedy augmentation gets stuck
        n = 2 * k + 2
        edges = [(1, 2 + i, 1) for i in range(k)] + [(k + 2 + j, n, 1) for j in range(k)]
        for i in range(k):
            for j in rng.sample(range(k), 3):
                edges.append((2 + i, k + 2 + j, 1))
        rng.shuffle(edges)
        private.append(_case(n, edges))
    return {"public": public, "private": private}
