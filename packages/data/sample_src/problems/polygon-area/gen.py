"""Tests for polygon-area (float answers): star-shaped random polygons in both orientations."""

import math
import random


def _case(pts: list[tuple[int, int]]) -> str:
    return f"{len(pts)}\n" + "".join(f"{x} {y}\n" for x, y in pts)


def _star(rng: random.Random, n: int, r: int) -> list[tuple[int, int]]:
    angles = sorted(rng.sample(range(360000), n))
    pts = []
    for a in angles:
        rad = rng.randint(r // 2, r)
        t = a / 360000 * 2 * math.pi
        pts.append((round(rad * math.cos(t)), round(rad * math.sin(t))))
    return pts


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = [_case([(0, 0), (4, 0), (4, 3), (0, 3)]), _case([(0, 0), (0, 1), (1, 0)])]
    private = [_case([(-(10**6), -(10**6)), (10**6, -(10**6)), (10**6, 10**6), (-(10**6), 10**6)])]
    private.append(_case([(0, 0), (2, 0), (2, 2), (1, 1), (0, 2)]))
    for k in range(5):
        pts = _star(rng, rng.randint(3, 10 if k < 2 else 3000), 10**6 if k > 2 else 100)
        if k % 2:
            pts.reverse()
        private.append(_case(pts))
    return {"public": public, "private": private}
