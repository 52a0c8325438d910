"""Tests for candy-split: t values of n per test."""

import random


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = ["3\n8\n2\n7\n"]
    private = []
    for k in range(8):
        if k == 0:
            ns = [1, 2, 3, 4, 5, 6]
        else:
            hi = 20 if k < 4 else 10**9
            ns = [rng.randint(1, hi) for _ in range(rng.randint(1, 300))]
        private.append(f"{len(ns)}\n" + "\n".join(map(str, ns)) + "\n")
    # generated tests: mutations of the public example (as in CodeContests)
    generated = [f"3\n{8 + d}\n{max(1, 2 + d)}\n{7 + d}\n" for d in (-1, 1, 2)]
    return {"public": public, "private": private, "generated": generated}
