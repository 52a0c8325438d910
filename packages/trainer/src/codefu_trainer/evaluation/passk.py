"""The unbiased pass@k estimator (Chen et al. 2021, "Evaluating Large Language Models
Trained on Code").

With n samples of a problem of which c are correct, pass@k = 1 − C(n−c, k) / C(n, k): the
probability that k samples drawn without replacement from the n contain a correct one. It
is computed in the numerically stable product form 1 − ∏_{i=n−c+1}^{n} (1 − k/i) and
averaged over problems.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k of one problem with `n` samples, `c` of them correct (requires 1 <= k <= n)."""
    if not 0 <= c <= n:
        raise ValueError(f"correct samples c={c} must be within [0, n={n}]")
    if not 1 <= k <= n:
        raise ValueError(f"pass@{k} needs 1 <= k <= n; this problem has n={n} samples")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """pass@k averaged over problems given as (n, c) pairs; 0.0 for no problems."""
    values = [pass_at_k(n, c, k) for n, c in counts]
    return sum(values) / len(values) if values else 0.0
