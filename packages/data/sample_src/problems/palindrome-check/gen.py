"""Tests for palindrome-check: palindromes, near-palindromes (same ends), random words."""

import random


def _case(words: list[str]) -> str:
    return f"{len(words)}\n" + "\n".join(words) + "\n"


def _word(rng: random.Random, kind: int) -> str:
    n = rng.randint(1, 12)
    half = "".join(rng.choice("abc") for _ in range(n))
    if kind == 0:
        return half + half[::-1][rng.randint(0, 1) :]
    if kind == 1 and n >= 3:  # same first and last letter, broken in the middle
        w = list(half + half[::-1])
        w[1] = "x" if w[1] != "x" else "y"
        return "".join(w)
    return "".join(rng.choice("ab") for _ in range(rng.randint(1, 200)))


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case(["level", "abca", "z", "abcba"])]
    private = [_case(["aa", "ab", "aba", "abba", "abxa"])]
    for _ in range(6):
        private.append(_case([_word(rng, rng.randint(0, 2)) for _ in range(rng.randint(1, 200))]))
    return {"public": public, "private": private}
