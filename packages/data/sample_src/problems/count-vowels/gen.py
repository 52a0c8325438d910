"""Tests for count-vowels: random words with and without the letter y."""

import random
import string


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = ["rhythm\n", "aeroplane\n"]
    private = ["y\n", "b\n", "yyyyyy\n"]
    for k in range(6):
        n = rng.randint(1, 100 if k < 3 else 5000)
        alphabet = string.ascii_lowercase if k % 2 else "aybcyeoz"
        private.append("".join(rng.choice(alphabet) for _ in range(n)) + "\n")
    return {"public": public, "private": private}
