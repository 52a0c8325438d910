"""Tests for flawed-no-private. Deliberately flawed row: the dataset stores NO private tests,
to exercise the pipeline's "no private tests" filter. Only the statement examples are kept."""

import random


def generate(rng: random.Random) -> dict[str, list[str]]:
    return {"public": ["3\n", "1000000000\n"], "private": []}
