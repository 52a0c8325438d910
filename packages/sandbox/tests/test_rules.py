"""A problem's judging rules → checker parameters (codefu_sandbox.rules)."""

from __future__ import annotations

import pytest

from codefu_sandbox import CheckerConfig
from codefu_sandbox.checkers import comparisons
from codefu_sandbox.rules import TOLERANCE_PARAMS, JudgingRules, checker_config, checker_params

EVERY_RULE = JudgingRules(("NO", "YES"), 1e-4, "absolute", several_answers=True, any_order="line")


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
    assert checker_params("floats", JudgingRules(("YES",)), tolerance=1e-6) == {"precision": 1e-6}


@pytest.mark.parametrize("checker", ["tokens", "lines", "exact", "yesno"])
def test_other_checkers_take_no_rule(checker: str) -> None:
    assert checker_params(checker, EVERY_RULE, tolerance=1e-6) == {}


def test_without_rules_only_the_default_tolerance() -> None:
    assert checker_params("codecontests") == {}
    assert checker_params("codecontests", JudgingRules(), tolerance=1e-6) == {"tolerance": 1e-6}
    assert checker_params("codecontests", None, tolerance=1e-3) == {"tolerance": 1e-3}
    assert checker_params("floats", None, tolerance=1) == {"precision": 1.0}


@pytest.mark.parametrize("checker", comparisons())
@pytest.mark.parametrize(
    "rules",
    [
        None,
        JudgingRules(),
        EVERY_RULE,
        JudgingRules(float_tolerance=1e-9, tolerance_mode="relative"),
    ],
)
def test_the_parameters_are_ones_the_checker_takes(
    checker: str, rules: JudgingRules | None
) -> None:
    CheckerConfig(checker, checker_params(checker, rules, tolerance=1e-6))  # raises if not
    assert set(TOLERANCE_PARAMS) <= set(comparisons())


def test_checker_config_is_the_checker_with_those_parameters() -> None:
    assert checker_config("floats", EVERY_RULE, tolerance=1e-6) == CheckerConfig(
        "floats", {"precision": 1e-4}
    )
    assert checker_config("tokens") == CheckerConfig("tokens")
