"""Tests for alternating-string; several need the pattern that starts with 1."""

import random


def _case(s: str) -> str:
    return f"{len(s)}\n{s}\n"


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case("0001"), _case("110"), _case("10101")]
    private = [_case("1"), _case("0"), _case("11"), _case("1010101010")]
    for k in range(5):
        n = rng.randint(1, 30 if k < 2 else 20000)
        p = rng.random()
        private.append(_case("".join("1" if rng.random() < p else "0" for _ in range(n))))
    return {"public": public, "private": private}
