"""Tests for dijkstra-path: random graphs and a long chain of heavy roads (answer > 2^31)."""

import random


def _case(n: int, edges: list[tuple[int, int, int]]) -> str:
    return f"{n} {len(edges)}\n" + "".join(f"{u} {v} {w}\n" for u, v, w in edges)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case(4, [(1, 2, 5), (2, 4, 5), (1, 3, 2), (3, 4, 9)]), _case(3, [(1, 2, 7)])]
    private = [_case(2, []), _case(2, [(1, 1, 3), (1, 2, 4), (2, 1, 1)])]
    private.append(_case(10, [(i, i + 1, 10**9) for i in range(1, 10)]))
    for k in range(5):
        n = rng.randint(2, 8 if k < 2 else 3000)
        m = rng.randint(0, 3 * n)
        wmax = 20 if k % 2 else 10**9
        private.append(
            _case(
                n, [(rng.randint(1, n), rng.randint(1, n), rng.randint(1, wmax)) for _ in range(m)]
            )
        )
    return {"public": public, "private": private}
