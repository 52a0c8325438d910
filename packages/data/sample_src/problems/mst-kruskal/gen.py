"""Tests for mst-kruskal: connected random graphs with cheap edges that close cycles."""

import random


def _graph(rng: random.Random, n: int, extra: int, cmax: int) -> str:
    edges = [(rng.randint(1, v - 1), v, rng.randint(1, cmax)) for v in range(2, n + 1)]
    edges += [(rng.randint(1, n), rng.randint(1, n), rng.randint(1, cmax)) for _ in range(extra)]
    rng.shuffle(edges)
    perm = list(range(1, n + 1))
    rng.shuffle(perm)
    return f"{n} {len(edges)}\n" + "".join(
        f"{perm[u - 1]} {perm[v - 1]} {c}\n" for u, v, c in edges
    )


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = ["4 5\n1 2 1\n2 3 2\n1 3 2\n3 4 7\n2 4 5\n", "1 0\n"]
    private = [
        "2 1\n1 2 1000000000\n",
        "3 3\n1 2 1\n2 3 1\n1 3 1\n",
        "3 4\n1 1 1\n1 2 5\n2 3 6\n1 2 2\n",
    ]
    for k in range(5):
        n = rng.randint(2, 8 if k < 2 else 5000)
        private.append(_graph(rng, n, rng.randint(0, 2 * n), 10 if k % 2 else 10**9))
    return {"public": public, "private": private}
