"""Tests for knapsack-01: items small enough to be taken repeatedly by an unbounded DP."""

import random


def _case(cap: int, items: list[tuple[int, int]]) -> str:
    return f"{len(items)} {cap}\n" + "".join(f"{w} {v}\n" for w, v in items)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case(8, [(3, 30), (4, 50), (5, 60)]), _case(5, [(2, 10)])]
    private = [_case(1, [(2, 5)]), _case(100000, [(100000, 10**9)] * 100)]
    for k in range(5):
        n = rng.randint(1, 10 if k < 2 else 100)
        cap = rng.randint(1, 50 if k < 2 else 100000)
        wmax = max(1, cap // 3)
        private.append(
            _case(cap, [(rng.randint(1, wmax), rng.randint(1, 10**9)) for _ in range(n)])
        )
    return {"public": public, "private": private}
