"""Tests for clock-angle (float answers): every minute of the day and random samples."""

import random


def _case(times: list[tuple[int, int]]) -> str:
    return f"{len(times)}\n" + "".join(f"{h} {m}\n" for h, m in times)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([(3, 0), (12, 30), (23, 59)])]
    private = [
        _case([(h, m) for h in range(24) for m in range(60)]),
        _case([(0, 0), (6, 0), (18, 0)]),
    ]
    for _ in range(5):
        private.append(
            _case([(rng.randint(0, 23), rng.randint(0, 59)) for _ in range(rng.randint(1, 50))])
        )
    return {"public": public, "private": private}
