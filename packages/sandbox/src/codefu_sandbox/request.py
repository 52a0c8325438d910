"""One judging asked of the judge (`JudgeRequest`), made in this one module from what the
judge needs of a problem and what a run's policy adds to it.

A problem's ground truth (docs/ARCHITECTURE.md, "Ground truth": its tests, time and memory
limits, judging rules, checker and grader) becomes a `Problem` under a run's
`JudgingPolicy` (`JudgingPolicy.problem`): the time limit scaled (`judge_time_seconds`), the
comparison (the problem's own checker, else the policy's checker under the problem's judging
rules), its grader, and for each language the policy accepts one `JudgeRequest`: the limits
as they apply to a program in that language (the time limit times the language's factor),
the checker, the grader and its parameters, how many tests' time limits the grader's runs
take at most (`Grader.allowances`: what a caller's deadline covers), and when judging stops.

The reward and data validation both build their requests here; `Judge.judge` builds one
from its arguments with the same function (`request_for`). The judge applies a request as
it is (`Judge.judge_request`), adding only what it measures on its own host: the runtime's
memory allowance of the built program.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from codefu_sandbox.checkers import CheckerConfig
from codefu_sandbox.graders import GraderConfig, get_grader
from codefu_sandbox.languages import DEFAULT_LANGUAGE, check_language, check_time_factors
from codefu_sandbox.models import Limits
from codefu_sandbox.rules import JudgingRules, checker_config
from codefu_sandbox.verdicts import Verdict

__all__ = [
    "JudgeRequest",
    "JudgingPolicy",
    "Problem",
    "judge_time_seconds",
    "request_for",
    "time_limit_seconds",
]


@dataclass(frozen=True)
class JudgeRequest:
    """How to judge one program, as the judge applies it (`Judge.judge_request`).

    `language`: the program's language. `limits`: CPU seconds per test (the problem's, its
    scale and the language's time factor applied) and the problem's memory bytes (the judge
    adds its runtime's allowance). `checker` compares an output; `grader` runs and compares
    the tests. `allowances`: how many tests' time limits the grader's runs take at most, all
    together (the bound a caller's deadline covers). Judging stops after the first failing
    test with `stop_on_first_failure`, or after the first test whose verdict is in `stop_on`.
    """

    language: str
    limits: Limits
    checker: CheckerConfig
    grader: GraderConfig
    allowances: int
    stop_on_first_failure: bool = False
    stop_on: frozenset[Verdict] = frozenset()

    def stops_after(self, verdict: Verdict) -> bool:
        """Whether judging stops after a test with `verdict`."""
        return verdict in self.stop_on or (self.stop_on_first_failure and verdict is not Verdict.AC)


def request_for(
    limits: Limits,
    tests: int,
    *,
    language: str = DEFAULT_LANGUAGE,
    checker: CheckerConfig,
    grader: GraderConfig,
    time_factors: Mapping[str, float],
    stop_on_first_failure: bool = False,
    stop_on: Collection[Verdict] = (),
) -> JudgeRequest:
    """The request for a program in `language` on a problem with `limits` (its time limit
    scaled as the run judges it) and `tests` tests: the time limit times the language's
    factor (`time_factors`, the defaults filled in by `check_time_factors`), and the grader's
    allowances for that many tests. ValueError for an unknown language or grader."""
    factor = check_time_factors(time_factors)[check_language(language)]
    return JudgeRequest(
        language=language,
        limits=Limits(limits.time_seconds * factor, limits.memory_bytes),
        checker=checker,
        grader=grader,
        allowances=get_grader(grader.name).allowances(tests),
        stop_on_first_failure=stop_on_first_failure,
        stop_on=frozenset(stop_on),
    )


def time_limit_seconds(value: Any) -> float | None:
    """A ground truth's ``time_limit`` (``{seconds, nanos}``, or a plain number) in seconds.

    None when the limit is absent: a null value, or a mapping without ``seconds``.
    """
    if isinstance(value, Mapping):
        if value.get("seconds") is None:
            return None
        return float(value["seconds"]) + float(value.get("nanos") or 0) / 1e9
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def judge_time_seconds(value: Any, *, scale: float, default: float | None = None) -> float:
    """The CPU seconds per test a problem is judged under: its ``time_limit``
    (`time_limit_seconds`), or `default` when it has none (or one <= 0), times `scale`.

    Raises ValueError when the problem has no time limit and no `default` is given.
    """
    seconds = time_limit_seconds(value) or 0.0
    if seconds <= 0:
        if default is None:
            raise ValueError(f"no time limit in {value!r} and no default")
        seconds = default
    return seconds * scale


@dataclass(frozen=True)
class Problem:
    """A problem as a run judges it (`JudgingPolicy.problem`): its `tests` (input, output),
    the `rules` its statement states, and `requests`, one per language the policy accepts."""

    name: str
    tests: tuple[tuple[str, str], ...]
    rules: JudgingRules
    requests: Mapping[str, JudgeRequest]


@dataclass(frozen=True)
class JudgingPolicy:
    """How a run judges its problems: the settings that turn a ground truth into requests.

    `checker`: the comparison of a problem without its own checker, applying the problem's
    judging rules, with `tolerance` the real-number tolerance where the rules state none.
    `time_limit_scale`: the factor on every problem's time limit; `time_factors`: per
    language, the factor on that (the languages left out: their default). `languages`: the
    languages a request is made for. `default_time_seconds` / `default_memory_bytes`: the
    limits of a problem that states none (None: such a problem is refused). Its tests are
    its private tests, after its public ones (the examples first, as LiveCodeBench runs
    them) with `include_public_tests`. Judging stops
    after the first failing test with `stop_on_first_failure`, after the first TLE with
    `stop_on_timeout`."""

    checker: str
    tolerance: float | None = None
    time_limit_scale: float = 1.0
    time_factors: Mapping[str, float] = field(default_factory=dict)
    languages: tuple[str, ...] = (DEFAULT_LANGUAGE,)
    default_time_seconds: float | None = None
    default_memory_bytes: int | None = None
    include_public_tests: bool = False
    stop_on_first_failure: bool = False
    stop_on_timeout: bool = False

    def __post_init__(self) -> None:
        if not self.time_limit_scale > 0:
            raise ValueError(f"time_limit_scale must be > 0, got {self.time_limit_scale}")
        object.__setattr__(self, "time_factors", check_time_factors(self.time_factors))
        object.__setattr__(self, "languages", tuple(self.languages))
        for language in self.languages:
            check_language(language)

    def problem(self, ground_truth: Any) -> Problem:
        """The problem a ground truth states (a mapping, or its JSON text), with its requests.

        Raises ValueError (or TypeError, json.JSONDecodeError) naming what is unusable: a
        ground truth that is not a mapping, tests whose inputs and outputs differ in number,
        a missing limit without a default, bad judging rules, checker or grader."""
        gt = json.loads(ground_truth) if isinstance(ground_truth, str | bytes) else ground_truth
        if not isinstance(gt, Mapping):
            raise ValueError(f"ground truth must be a mapping, got {type(gt).__name__}")
        name = str(gt.get("name") or "?")
        tests = _pairs(gt.get("private_tests"), f"{name}: private_tests")
        if self.include_public_tests:  # the examples first, as LiveCodeBench runs them
            tests = _pairs(gt.get("public_tests"), f"{name}: public_tests") + tests
        seconds = judge_time_seconds(
            gt.get("time_limit"), scale=self.time_limit_scale, default=self.default_time_seconds
        )
        memory = int(gt.get("memory_limit_bytes") or 0) or self.default_memory_bytes
        if memory is None:
            raise ValueError(f"{name}: no memory_limit_bytes and no default")
        rules = JudgingRules.from_dict(gt.get("judging_rules"))
        stored = gt.get("checker")
        checker = (
            checker_config(self.checker, rules, tolerance=self.tolerance)
            if stored is None
            else CheckerConfig.from_dict(stored)
        )
        grader = GraderConfig.from_dict(gt.get("grader"))  # absent or null: the default
        limits = Limits(seconds, memory)
        stop_on = (Verdict.TLE,) if self.stop_on_timeout else ()
        requests = {
            language: request_for(
                limits,
                len(tests),
                language=language,
                checker=checker,
                grader=grader,
                time_factors=self.time_factors,
                stop_on_first_failure=self.stop_on_first_failure,
                stop_on=stop_on,
            )
            for language in self.languages
        }
        return Problem(name, tuple(tests), rules, requests)


def _pairs(block: Any, where: str) -> list[tuple[str, str]]:
    if block is None:
        return []
    if not isinstance(block, Mapping) or "input" not in block or "output" not in block:
        raise ValueError(f"{where} must be a mapping with 'input' and 'output' lists")
    inputs, outputs = list(block["input"]), list(block["output"])
    if len(inputs) != len(outputs):
        raise ValueError(f"{where} has {len(inputs)} inputs but {len(outputs)} outputs")
    return [(str(i), str(o)) for i, o in zip(inputs, outputs, strict=True)]
