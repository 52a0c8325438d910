"""A problem's judging rules → checker parameters (codefu_sandbox.rules)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from codefu_sandbox import CheckerConfig
from codefu_sandbox.checkers import BUILTIN
from codefu_sandbox.rules import TOLERANCE_PARAMS, checker_params


@dataclass(frozen=True)
class Rules:
    any_case_words: tuple[str, ...] = ()
    float_tolerance: float | None = None
    tolerance_mode: str = ""
    any_order: str = ""


EVERY_RULE = Rules(("NO", "YES"), 1e-4, "absolute", "line")


def test_codecontests_takes_every_rule() -> None:
    assert checker_params("codecontests", EVERY_RULE, tolerance=1e-6) == {
        "tolerance": 1e-4,
        "tolerance_mode": "absolute",
        "real_numbers": True,
        "any_case_words": ["NO", "YES"],
        "any_order": "line",
    }


def test_floats_takes_the_tolerance_as_its_precision() -> None:
    assert checker_params("floats", EVERY_RULE, tolerance=1e-6) == {"precision": 1e-4}
    assert checker_params("floats", Rules(("YES",)), tolerance=1e-6) == {"precision": 1e-6}


@pytest.mark.parametrize("checker", ["tokens", "lines", "exact", "yesno"])
def test_other_checkers_take_no_rule(checker: str) -> None:
    assert checker_params(checker, EVERY_RULE, tolerance=1e-6) == {}


def test_without_rules_only_the_default_tolerance() -> None:
    assert checker_params("codecontests") == {}
    assert checker_params("codecontests", Rules(), tolerance=1e-6) == {"tolerance": 1e-6}
    assert checker_params("codecontests", None, tolerance=1e-3) == {"tolerance": 1e-3}
    assert checker_params("floats", None, tolerance=1) == {"precision": 1.0}


@pytest.mark.parametrize("checker", BUILTIN)
@pytest.mark.parametrize(
    "rules", [None, Rules(), EVERY_RULE, Rules(float_tolerance=1e-9, tolerance_mode="relative")]
)
def test_the_parameters_are_ones_the_checker_takes(checker: str, rules: Rules | None) -> None:
    CheckerConfig(checker, checker_params(checker, rules, tolerance=1e-6))  # raises if not
    assert set(TOLERANCE_PARAMS) <= set(BUILTIN)
