"""Tests for segtree-add-max: many large additions make heights exceed 2^31."""

import random


def _case(rng: random.Random, n: int, q: int, xmax: int) -> str:
    h = [rng.randint(0, 10**9) for _ in range(n)]
    ops = []
    for _ in range(q):
        lo = rng.randint(1, n)
        hi = rng.randint(lo, n)
        if rng.random() < 0.5:
            ops.append(f"1 {lo} {hi} {rng.randint(0, xmax)}")
        else:
            ops.append(f"2 {lo} {hi}")
    return f"{n} {q}\n{' '.join(map(str, h))}\n" + "\n".join(ops) + "\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = ["5 4\n1 2 3 4 5\n2 1 3\n1 2 4 10\n2 1 3\n2 5 5\n"]
    private = ["1 1\n0\n2 1 1\n", "2 3\n1000000000 0\n1 1 2 1000000000\n1 1 1 1000000000\n2 1 2\n"]
    for n, q, xmax in [
        (5, 10, 10),
        (10, 20, 10**9),
        (300, 300, 100),
        (3000, 3000, 10**9),
        (5000, 5000, 10**9),
    ]:
        private.append(_case(rng, n, q, xmax))
    return {"public": public, "private": private}
