"""Tests for codechef-cookie-boxes (a non-Codeforces problem; excluded by default)."""

import random


def _case(pairs: list[tuple[int, int]]) -> str:
    return f"{len(pairs)}\n" + "".join(f"{a} {b}\n" for a, b in pairs)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([(10, 3), (5, 5), (2, 7)])]
    private = [_case([(0, 1), (10**18, 1), (10**18, 10**18), (10**18 - 1, 10**18)])]
    for k in range(5):
        hi = 100 if k < 2 else 10**18
        private.append(
            _case([(rng.randint(0, hi), rng.randint(1, hi)) for _ in range(rng.randint(1, 200))])
        )
    return {"public": public, "private": private}
