"""A grader with a parameter of its own, a checker and a source format, each its module and
one registration, edited nowhere else: a source in the test-only format is prepared (its
problems name the test-only grader and its parameter, which the ground truth stores as the
grader defines them), read back by the reward's policy into the judge's request, judged by
the reward's worker under the test-only checker, scored; then all three are gone.

The judge runs in this process (the reward's `JudgeWorker`): a registration is this
process's; the pools' worker processes find a member by its entry point."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from codefu_data import formats
from codefu_data.config import DataConfig
from codefu_data.formats import FileColumn, ReadOptions, SourceFormat
from codefu_data.formats.problems import Problem, problem_table
from codefu_data.prepare import prepare
from codefu_sandbox import GraderConfig
from codefu_sandbox.checkers import CHECKERS
from codefu_sandbox.graders import GRADERS
from codefu_sandbox.graders.base import Grader, GradingJob
from codefu_sandbox.verdicts import TestResult, checked
from codefu_trainer.reward.config import RewardConfig
from codefu_trainer.reward.rules import score_report
from codefu_trainer.reward.worker import JudgeWorker


class Skipping(Grader):
    """stdin → stdout → checker, the output's first `skip_lines` lines left out (a banner)."""

    name = "skipping"
    parameters: ClassVar[Mapping[str, type]] = {"skip_lines": int}

    def grade(self, job: GradingJob) -> list[TestResult]:
        results = []
        with job.serve() as program:
            for test in job.tests:
                run = program.run(test.input.encode())
                if run.verdict is not None:
                    results.append(run.failure())
                else:
                    kept = run.output.decode().split("\n")[self.params["skip_lines"] :]
                    answer = job.check("\n".join(kept), test.output, input=test.input)
                    results.append(run.result(checked(answer), answer.message))
                if job.stops_after(results[-1].verdict):
                    break
        return results


CASELESS = '''
from codefu_sandbox.checkers import CheckResult


def check(output: str, expected: str, *, input: str = "") -> CheckResult:
    """The same tokens in any letter case."""
    same = output.upper().split() == expected.upper().split()
    return CheckResult(same, "" if same else "the words differ")
'''


class Banners(SourceFormat):
    """Rows of a title, a statement, `[[input, output], ...]` cases and how many banner
    lines an answer prints first (the test-only grader's parameter)."""

    name = "banners"
    key_columns = frozenset({"title", "statement", "cases", "banner_lines"})
    described = "a banners file has title, statement, cases and banner_lines"

    def file_columns(self, wanted: Sequence[str]) -> list[FileColumn]:
        return [
            *(FileColumn(c, pa.string()) for c in ("title", "statement", "cases")),
            FileColumn("banner_lines", pa.int64()),
        ]

    def to_problems(
        self, table: pa.Table, wanted: Sequence[str], first_row: int, options: ReadOptions
    ) -> pa.Table:
        problems = []
        for row in table.to_pylist():
            cases = json.loads(row["cases"])
            problems.append(
                Problem(
                    name=row["title"],
                    description=row["statement"],
                    data_source=self.name,
                    private=([c[0] for c in cases], [c[1] for c in cases]),
                    grader=GraderConfig(Skipping.name, {"skip_lines": int(row["banner_lines"])}),
                    difficulty_label="easy",
                    time_seconds=1.0,
                )
            )
        return problem_table(problems, wanted, options)


@pytest.fixture
def registered(tmp_path: Path) -> Iterator[ModuleType]:
    """The three, one registration each; afterwards none is left."""
    path = tmp_path / "caseless.py"
    path.write_text(CASELESS)
    spec = importlib.util.spec_from_file_location("caseless", path)
    assert spec is not None and spec.loader is not None
    caseless = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(caseless)
    GRADERS.register(Skipping)
    CHECKERS.register(caseless)
    formats.register(Banners())
    try:
        yield caseless
    finally:
        GRADERS.unregister(Skipping.name)
        CHECKERS.unregister("caseless")
        formats.unregister(Banners.name)
    assert not {"skipping", "caseless", "banners"} & {*GRADERS, *CHECKERS, *formats.FORMATS}


# Prints a banner line, then "yes" when the two numbers are equal, else "no".
ANSWER = "a, b = input().split()\nprint('judge me')\nprint('yes' if a == b else 'no')\n"


def test_registered_extensions_are_prepared_stored_judged_and_scored(
    registered: ModuleType, tmp_path: Path
) -> None:
    rows = [
        {
            "title": "equal",
            "statement": "Print YES when the two numbers are equal, else NO, after one banner.",
            "cases": json.dumps([["1 1\n", "YES\n"], ["1 2\n", "NO\n"]]),
            "banner_lines": 1,
        }
    ]
    source = tmp_path / "train.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    prepare(DataConfig(source=str(source), out_dir=str(tmp_path / "out")), progress=False)
    [row] = pq.read_table(tmp_path / "out" / "easy" / "train.parquet").to_pylist()
    truth: dict[str, Any] = row["reward_model"]["ground_truth"]
    assert row["data_source"] == "banners"
    # Stored as the grader defines its parameter: an int, in the parameters' JSON text.
    assert truth["grader"] == {"name": "skipping", "params": '{"skip_lines": 1}'}

    worker = JudgeWorker(None)  # the default cache, as a judge node's (its PCH built once)
    verdicts = {}
    for checker in ("caseless", "codecontests"):
        config = RewardConfig(checker=checker, languages=["python"])
        problem = config.policy().problem(truth)
        request = problem.requests["python"]
        assert request.grader == GraderConfig("skipping", {"skip_lines": 1})
        summary = worker.judge(ANSWER, problem.tests, request)
        verdicts[checker] = (summary.verdict, score_report(summary, config).score)
    assert verdicts == {"caseless": ("AC", 1.0), "codecontests": ("WA", 0.0)}


def test_an_unregistered_grader_is_refused_in_one_line() -> None:
    truth = {"name": "p", "private_tests": {"input": [""], "output": [""]}}
    with pytest.raises(ValueError, match="unknown grader 'skipping'"):
        RewardConfig().policy().problem(
            {**truth, "grader": {"name": "skipping", "params": '{"skip_lines": 1}'}}
        )
