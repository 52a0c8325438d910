"""Tests for interval-scheduling: long early intervals trap greedy-by-start solutions."""

import random


def _case(iv: list[tuple[int, int]]) -> str:
    return f"{len(iv)}\n" + "".join(f"{a} {b}\n" for a, b in iv)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([(1, 10), (2, 3), (3, 5)]), _case([(0, 5), (5, 10), (0, 10), (10, 11)])]
    private = [_case([(0, 1)]), _case([(0, 100), (1, 2), (2, 3), (3, 4)]), _case([(5, 6)] * 4)]
    for k in range(5):
        n = rng.randint(1, 20 if k < 2 else 3000)
        hi = 50 if k < 3 else 10**9
        iv = []
        for _ in range(n):
            a = rng.randint(0, hi - 1)
            iv.append((a, rng.randint(a + 1, min(hi, a + 1 + hi // 5))))
        private.append(_case(iv))
    generated = [_case([(1 + d, 10), (2, 3 + d), (3, 5)]) for d in (0, 1)]
    return {"public": public, "private": private, "generated": generated}
