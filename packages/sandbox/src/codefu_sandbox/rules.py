"""A problem's judging rules → the parameters of the checker that applies them.

The judging rules are what a statement relaxes in the comparison (codefu-data reads them
from statements and records them as `codefu_data.judging_rules.JudgingRules`): answer words
in any letter case, a tolerance for real numbers and its mode, a free output order. Only
the checkers know their parameters, so this mapping lives here, beside them, and both data
validation and the reward call it: `checker_params("codecontests", rules, tolerance=1e-6)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

# The parameter that takes a default tolerance for real numbers, per checker.
TOLERANCE_PARAMS = {"codecontests": "tolerance", "floats": "precision"}


class ComparisonRules(Protocol):
    """What a checker needs of a problem's judging rules (JudgingRules has these fields)."""

    @property
    def any_case_words(self) -> Sequence[str]: ...

    @property
    def float_tolerance(self) -> float | None: ...

    @property
    def tolerance_mode(self) -> str: ...

    @property
    def any_order(self) -> str: ...


def checker_params(
    checker: str, rules: ComparisonRules | None = None, *, tolerance: float | None = None
) -> dict[str, Any]:
    """The parameters that make built-in checker `checker` apply `rules`.

    `tolerance`: a default tolerance for real numbers, under the name the checker takes it
    by (`TOLERANCE_PARAMS`), for problems whose rules state none. `codecontests` takes
    every rule (the tolerance and its mode with `real_numbers`, the any-case words, the free
    order); `floats` takes the tolerance as its `precision` (always absolute-or-relative);
    other checkers take none. Of several valid answers only a free order has a parameter
    (`codecontests`' `any_order`): no checker that compares with one expected output can
    apply any other.
    """
    name = TOLERANCE_PARAMS.get(checker)
    params: dict[str, Any] = {}
    if name is not None and tolerance is not None:
        params[name] = float(tolerance)
    if rules is None:
        return params
    if checker == "codecontests":
        if rules.float_tolerance is not None:
            params["tolerance"] = rules.float_tolerance
            params["tolerance_mode"] = rules.tolerance_mode
            params["real_numbers"] = True
        if rules.any_case_words:
            params["any_case_words"] = list(rules.any_case_words)
        if rules.any_order:
            params["any_order"] = rules.any_order
    elif checker == "floats" and rules.float_tolerance is not None:
        params["precision"] = rules.float_tolerance
    return params
