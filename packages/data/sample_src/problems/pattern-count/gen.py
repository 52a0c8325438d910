"""Tests for pattern-count: periodic strings make the naive comparison quadratic."""

import random


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = ["abababa\naba\n", "abc\nabcd\n"]
    private = ["a\na\n", "aaaa\naa\n", "ab\nb\n"]
    for k in range(4):
        alpha = "ab" if k % 2 else "abc"
        s = "".join(rng.choice(alpha) for _ in range(rng.randint(1, 20 if k < 2 else 100000)))
        p = "".join(rng.choice(alpha) for _ in range(rng.randint(1, 3 if k < 3 else 6)))
        private.append(f"{s}\n{p}\n")
    private.append("a" * 200000 + "\n" + "a" * 100000 + "\n")
    private.append("ab" * 100000 + "\n" + "ab" * 40000 + "\n")
    return {"public": public, "private": private}
