"""Tests for topo-order. Several orders are valid: ``check`` accepts any of them.

The dataset stores the reference's answer (the lexicographically smallest order);
ref_fifo.cpp is another accepted solution that usually prints a different order.
"""

import random
from collections import deque


def _case(n: int, edges: list[tuple[int, int]]) -> str:
    return f"{n} {len(edges)}\n" + "".join(f"{a} {b}\n" for a, b in edges)


def _dag(rng: random.Random, n: int, m: int, cycle: bool) -> str:
    perm = list(range(1, n + 1))
    rng.shuffle(perm)
    edges = []
    for _ in range(m):
        i, j = sorted(rng.sample(range(n), 2))
        edges.append((perm[i], perm[j]))
    if cycle:
        edges.append((perm[n - 1], perm[0]))
        edges.extend((perm[i], perm[i + 1]) for i in range(n - 1))
    rng.shuffle(edges)
    return _case(n, edges)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case(4, [(1, 2), (1, 3), (3, 4)]), _case(3, [(1, 2), (2, 3), (3, 1)])]
    private = [_case(1, []), _case(3, [(3, 2), (2, 1)]), _case(5, [])]
    for k in range(5):
        n = rng.randint(2, 8 if k < 2 else 3000)
        private.append(_dag(rng, n, rng.randint(0, 2 * n), cycle=k == 3))
    return {"public": public, "private": private}


def check(inp: str, out: str) -> bool:
    """Accept any valid order; accept -1 only when the requirements contain a cycle."""
    tok = list(map(int, inp.split()))
    n, m = tok[0], tok[1]
    edges = [(tok[2 + 2 * i], tok[3 + 2 * i]) for i in range(m)]
    indeg = [0] * (n + 1)
    adj: list[list[int]] = [[] for _ in range(n + 1)]
    for a, b in edges:
        adj[a].append(b)
        indeg[b] += 1
    q = deque(v for v in range(1, n + 1) if indeg[v] == 0)
    seen = 0
    while q:
        v = q.popleft()
        seen += 1
        for u in adj[v]:
            indeg[u] -= 1
            if indeg[u] == 0:
                q.append(u)
    try:
        got = list(map(int, out.split()))
    except ValueError:
        return False
    if seen < n:
        return got == [-1]
    if sorted(got) != list(range(1, n + 1)):
        return False
    pos = {v: i for i, v in enumerate(got)}
    return all(pos[a] < pos[b] for a, b in edges)
