"""A problem's judging rules, and the parameters of the checker that applies them.

The judging rules are what a statement relaxes in the comparison: answer words in any
letter case, a tolerance for real numbers and its mode, a free output order. The judge owns
their vocabulary (`JudgingRules`, its modes those of the checkers:
`checkers.floats.TOLERANCE_MODES`, `checkers.codecontests.ORDER_MODES`); codefu-data reads
them from statements (`codefu_data.judging_rules.rules_from_statement`) and stores them in
each ground truth (`to_dict`). Only the checkers know their parameters, so the mapping
lives here too, and both data validation and the reward call it:
`checker_config("codecontests", rules, tolerance=1e-6)`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from codefu_sandbox.checkers import CheckerConfig
from codefu_sandbox.checkers.codecontests import ORDER_MODES
from codefu_sandbox.checkers.floats import TOLERANCE_MODES

# The parameter that takes a default tolerance for real numbers, per checker.
TOLERANCE_PARAMS = {"codecontests": "tolerance", "floats": "precision"}


@dataclass(frozen=True)
class JudgingRules:
    """How a program's output may differ from the expected one and still be accepted.

    `any_case_words`: answer words a program may print in any letter case, spelled as in the
    statement, sorted and deduplicated (e.g. ("NO", "YES")). `float_tolerance`: the
    statement's error bound 10^-k, None if it gives none. `tolerance_mode`:
    "absolute_or_relative", "absolute" or "relative"; "" exactly when there is no tolerance.
    `several_answers`: the statement says more than one output is valid. `any_order`: how,
    when the order of the output's items is all the statement frees (`several_answers` is
    then true too): "line" for the tokens within each line, "all" for the lines as well;
    "" otherwise.
    """

    any_case_words: tuple[str, ...] = ()
    float_tolerance: float | None = None
    tolerance_mode: str = ""
    several_answers: bool = False
    any_order: str = ""

    def __post_init__(self) -> None:
        words = self.any_case_words
        if isinstance(words, str) or not isinstance(words, Sequence):
            raise ValueError(f"any_case_words must be a list of words, not {type(words).__name__}")
        for word in words:
            if not isinstance(word, str) or not word or word != word.strip():
                raise ValueError(
                    f"any_case_words: {word!r} is not a word (a non-empty string without "
                    "surrounding whitespace)"
                )
        object.__setattr__(self, "any_case_words", tuple(sorted(set(words))))
        tol = self.float_tolerance
        if tol is not None:
            if isinstance(tol, bool) or not isinstance(tol, int | float):
                raise ValueError(
                    f"float_tolerance must be a number or null, not {type(tol).__name__}"
                )
            if not (math.isfinite(tol) and 0 < tol < 1):
                raise ValueError(f"float_tolerance must be in (0, 1), got {tol!r}")
            object.__setattr__(self, "float_tolerance", float(tol))
        if not isinstance(self.tolerance_mode, str):
            raise ValueError(
                f"tolerance_mode must be a string, not {type(self.tolerance_mode).__name__}"
            )
        if tol is None and self.tolerance_mode:
            raise ValueError(
                f"tolerance_mode is {self.tolerance_mode!r} but float_tolerance is null; "
                "give both or neither"
            )
        if tol is not None and self.tolerance_mode not in TOLERANCE_MODES:
            raise ValueError(
                f"tolerance_mode must be one of {', '.join(TOLERANCE_MODES)} when "
                f"float_tolerance is set, got {self.tolerance_mode!r}"
            )
        if not isinstance(self.several_answers, bool):
            raise ValueError(f"several_answers must be true or false, not {self.several_answers!r}")
        if self.any_order not in ORDER_MODES:
            raise ValueError(f'any_order must be "", "line" or "all", got {self.any_order!r}')
        if self.any_order and not self.several_answers:
            raise ValueError(
                "any_order is set but several_answers is false; an order-free "
                "output is one of several valid answers, so set both"
            )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (lists, not tuples) that `from_dict` reads back."""
        return {
            "any_case_words": list(self.any_case_words),
            "float_tolerance": self.float_tolerance,
            "tolerance_mode": self.tolerance_mode,
            "several_answers": self.several_answers,
            "any_order": self.any_order,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> JudgingRules:
        """Rules from `to_dict`'s shape; None or {} is no rules, missing keys take defaults.

        Raises ValueError naming the key for an unknown key or a value of the wrong type.
        """
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise ValueError(f"judging rules must be a mapping, not {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise ValueError(
                f"unknown judging-rules key {unknown[0]!r}; the keys are {', '.join(sorted(known))}"
            )
        words = data.get("any_case_words", ())
        if words is None:
            words = ()
        if isinstance(words, str) or not isinstance(words, Sequence):
            raise ValueError(f"any_case_words must be a list of words, not {type(words).__name__}")
        return cls(
            any_case_words=tuple(words),
            float_tolerance=data.get("float_tolerance"),
            tolerance_mode=data.get("tolerance_mode") or "",
            several_answers=data.get("several_answers", False),
            any_order=data.get("any_order") or "",
        )

    def is_empty(self) -> bool:
        """True when the statement relaxes nothing: compare outputs exactly."""
        return self == JudgingRules()


def checker_params(
    checker: str, rules: JudgingRules | None = None, *, tolerance: float | None = None
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


def checker_config(
    checker: str, rules: JudgingRules | None = None, *, tolerance: float | None = None
) -> CheckerConfig:
    """Built-in checker `checker` configured to apply `rules` (`checker_params`)."""
    return CheckerConfig(checker, checker_params(checker, rules, tolerance=tolerance))
