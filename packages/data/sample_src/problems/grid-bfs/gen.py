"""Tests for grid-bfs: random mazes; diagonal gaps trap 8-direction searches."""

import random


def _grid(rng: random.Random, n: int, m: int, wall: float) -> str:
    g = [["#" if rng.random() < wall else "." for _ in range(m)] for _ in range(n)]
    cells = [(i, j) for i in range(n) for j in range(m)]
    (a, b), (c, d) = rng.sample(cells, 2)
    g[a][b], g[c][d] = "S", "T"
    return f"{n} {m}\n" + "".join("".join(r) + "\n" for r in g)


def generate(rng: random.Random) -> dict[str, list[str]]:
    public = ["3 4\nS..#\n.#..\n...T\n", "2 2\nS#\n#T\n"]
    private = ["1 2\nST\n", "3 3\nS#.\n#.#\n.#T\n", "2 3\nS.#\n#.T\n"]
    for n, m, w in [(5, 5, 0.3), (10, 1, 0.1), (20, 30, 0.35), (100, 100, 0.3), (200, 150, 0.4)]:
        private.append(_grid(rng, n, m, w))
    return {"public": public, "private": private}
