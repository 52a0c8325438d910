"""The standard grader: each test's input on the program's stdin, its stdout compared with
the expected output by the problem's checker, one fresh process per test.

`prelude`: a named prelude run before the program, in its namespace, in the languages
that have one of that name (`Language.preludes`: "livecodebench", LiveCodeBench's imports,
for Python); a program in another language runs as it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from codefu_sandbox.graders import GraderConfig
from codefu_sandbox.graders.base import Grader, GradingJob, with_prelude
from codefu_sandbox.verdicts import TestResult, checked


class Stdio(Grader):
    """stdin → stdout → checker, one test at a time."""

    name = "stdio"
    parameters: ClassVar[Mapping[str, type]] = {"prelude": str}

    def grade(self, job: GradingJob) -> list[TestResult]:
        job = with_prelude(job, self.params.get("prelude"))
        results: list[TestResult] = []
        with job.serve() as program:
            for test in job.tests:
                run = program.run(test.input.encode("utf-8", "surrogateescape"))
                if run.verdict is None:
                    output = run.output.decode("utf-8", "surrogateescape")
                    answer = job.check(output, test.output, input=test.input)
                    result = run.result(checked(answer), answer.message)
                else:
                    result = run.failure()
                results.append(result)
                if job.stops_after(result.verdict):
                    break
        return results


GRADER = Stdio


def config(prelude: str | None = None) -> GraderConfig:
    """This grader's configuration: its programs run after the prelude named `prelude`."""
    return GraderConfig(Stdio.name, {} if prelude is None else {"prelude": prelude})
