"""Regenerate typical_tests.json: one test per solution in typical/, answers from Python.

The expected outputs come from straightforward Python reference implementations, not
from the C++ solutions, so the benchmark's "known-correct" solutions are checked
against an independent answer. Run: `python benchmarks/solutions/make_typical_tests.py`.
"""

from __future__ import annotations

import heapq
import json
import random
from collections import Counter, deque
from pathlib import Path

OUT = Path(__file__).resolve().parent / "typical_tests.json"


def sort_pairs(rng: random.Random) -> tuple[str, str]:
    n = 300
    p = [(rng.randint(-(10**9), 10**9), rng.randint(-(10**9), 10**9)) for _ in range(n)]
    return f"{n}\n" + "".join(f"{x} {y}\n" for x, y in p), "".join(
        f"{x} {y}\n" for x, y in sorted(p)
    )


def prefix_sums(rng: random.Random) -> tuple[str, str]:
    n, q = 500, 500
    a = [rng.randint(-(10**9), 10**9) for _ in range(n)]
    pre = [0]
    for x in a:
        pre.append(pre[-1] + x)
    qs = [sorted((rng.randint(1, n), rng.randint(1, n))) for _ in range(q)]
    text = f"{n} {q}\n{' '.join(map(str, a))}\n" + "".join(f"{lo} {hi}\n" for lo, hi in qs)
    return text, "".join(f"{pre[hi] - pre[lo - 1]}\n" for lo, hi in qs)


def bfs_grid(rng: random.Random) -> tuple[str, str]:
    h, w = 60, 80
    g = [["#" if rng.random() < 0.25 else "." for _ in range(w)] for _ in range(h)]
    g[0][0], g[h - 1][w - 1] = "S", "T"
    dist = {(0, 0): 0}
    queue = deque([(0, 0)])
    while queue:
        x, y = queue.popleft()
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            nx, ny = x + dx, y + dy
            if 0 <= nx < h and 0 <= ny < w and g[nx][ny] != "#" and (nx, ny) not in dist:
                dist[(nx, ny)] = dist[(x, y)] + 1
                queue.append((nx, ny))
    grid = "".join("".join(row) + "\n" for row in g)
    return f"{h} {w}\n{grid}", f"{dist.get((h - 1, w - 1), -1)}\n"


def dijkstra(rng: random.Random) -> tuple[str, str]:
    n, m = 300, 900
    edges = [(rng.randint(1, n), rng.randint(1, n), rng.randint(1, 10**6)) for _ in range(m)]
    adj: list[list[tuple[int, int]]] = [[] for _ in range(n + 1)]
    for u, v, wt in edges:
        adj[u].append((v, wt))
        adj[v].append((u, wt))
    best: list[int | None] = [None] * (n + 1)
    best[1] = 0
    heap = [(0, 1)]
    while heap:
        d, u = heapq.heappop(heap)
        if d != best[u]:
            continue
        for v, wt in adj[u]:
            known = best[v]
            if known is None or d + wt < known:
                best[v] = d + wt
                heapq.heappush(heap, (d + wt, v))
    text = f"{n} {m}\n" + "".join(f"{u} {v} {wt}\n" for u, v, wt in edges)
    answer = " ".join(str(-1 if best[v] is None else best[v]) for v in range(1, n + 1))
    return text, answer + "\n"


def knapsack(rng: random.Random) -> tuple[str, str]:
    n, cap = 100, 10000
    items = [(rng.randint(1, 1000), rng.randint(1, 10**6)) for _ in range(n)]
    best = [0] * (cap + 1)
    for wt, v in items:
        for c in range(cap, wt - 1, -1):
            best[c] = max(best[c], best[c - wt] + v)
    return f"{n} {cap}\n" + "".join(f"{wt} {v}\n" for wt, v in items), f"{max(best)}\n"


def kmp(rng: random.Random) -> tuple[str, str]:
    text, pat = "".join(rng.choice("ab") for _ in range(5000)), "abab"
    count = sum(text.startswith(pat, i) for i in range(len(text) - len(pat) + 1))
    return f"{text}\n{pat}\n", f"{count}\n"


def frequency(rng: random.Random) -> tuple[str, str]:
    words = ["".join(rng.choice("abc") for _ in range(rng.randint(1, 4))) for _ in range(2000)]
    counts = Counter(words)
    top = max(counts.values())
    word = min(w for w, c in counts.items() if c == top)
    return f"{len(words)}\n{' '.join(words)}\n", f"{word} {top}\n"


def dsu(rng: random.Random) -> tuple[str, str]:
    n, m = 1000, 800
    pairs = [(rng.randint(1, n), rng.randint(1, n)) for _ in range(m)]
    parent = list(range(n + 1))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    components = n
    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
            components -= 1
    return f"{n} {m}\n" + "".join(f"{a} {b}\n" for a, b in pairs), f"{components}\n"


def segment_tree(rng: random.Random) -> tuple[str, str]:
    n, q = 300, 400
    arr = [rng.randint(-(10**9), 10**9) for _ in range(n)]
    initial = list(arr)
    ops, outs = [], []
    for _ in range(q):
        if rng.random() < 0.5:
            i, v = rng.randint(1, n), rng.randint(-(10**9), 10**9)
            arr[i - 1] = v
            ops.append(f"u {i} {v}")
        else:
            lo, hi = sorted((rng.randint(1, n), rng.randint(1, n)))
            ops.append(f"q {lo} {hi}")
            outs.append(str(min(arr[lo - 1 : hi])))
    text = f"{n} {q}\n{' '.join(map(str, initial))}\n" + "\n".join(ops) + "\n"
    return text, "\n".join(outs) + "\n"


def binary_search(rng: random.Random) -> tuple[str, str]:
    n, k = 200, 10**9
    ts = [rng.randint(1, 10**4) for _ in range(n)]
    lo, hi = 0, min(ts) * k
    while lo < hi:
        mid = (lo + hi) // 2
        if sum(mid // x for x in ts) >= k:
            hi = mid
        else:
            lo = mid + 1
    return f"{n} {k}\n{' '.join(map(str, ts))}\n", f"{lo}\n"


def sieve(rng: random.Random) -> tuple[str, str]:
    n = 1_000_000
    flags = bytearray([1]) * (n + 1)
    flags[0] = flags[1] = 0
    for i in range(2, int(n**0.5) + 1):
        if flags[i]:
            flags[i * i :: i] = bytearray(len(flags[i * i :: i]))
    primes = [i for i in range(n + 1) if flags[i]]
    return f"{n}\n", f"{len(primes)} {primes[-1]}\n"


def two_pointers(rng: random.Random) -> tuple[str, str]:
    n, limit = 3000, 10**7
    a = [rng.randint(1, 10**6) for _ in range(n)]
    best, total, left = 0, 0, 0
    for right in range(n):
        total += a[right]
        while total > limit:
            total -= a[left]
            left += 1
        best = max(best, right - left + 1)
    return f"{n} {limit}\n{' '.join(map(str, a))}\n", f"{best} {len(set(a))}\n"


GENERATORS = (
    sort_pairs,
    prefix_sums,
    bfs_grid,
    dijkstra,
    knapsack,
    kmp,
    frequency,
    dsu,
    segment_tree,
    binary_search,
    sieve,
    two_pointers,
)


def main() -> None:
    tests = {}
    for seed, generate in enumerate(GENERATORS):
        given, expected = generate(random.Random(seed))
        tests[generate.__name__] = [{"input": given, "output": expected}]
    OUT.write_text(json.dumps(tests, indent=0) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(tests)} solutions)")


if __name__ == "__main__":
    main()
