"""A language added by one module and one registration, edited nowhere else: a test-only
POSIX shell language (dash, builtins only, so it runs under the solution allowlist) is
registered, then judged (the real sandbox, a checker program in it too), extracted from
responses, accepted by the reward's configuration and asked for by the prompts, and
unregistered."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codefu_data.config import PromptConfig
from codefu_data.prompts import build_messages
from codefu_sandbox import Judge, Limits, TestCase, Verdict
from codefu_sandbox.checkers import program
from codefu_sandbox.languages import (
    LANGUAGES,
    BuildConfig,
    Executor,
    Language,
    Program,
    language_of,
    register,
    unregister,
)
from codefu_sandbox.languages.base import Command, digest
from codefu_sandbox.runner import Runner
from codefu_trainer.reward.config import RewardConfig
from codefu_trainer.reward.extract import extract_answer

SHELL = shutil.which("dash", path="/usr/bin:/bin")
pytestmark = pytest.mark.skipif(SHELL is None, reason="dash is not installed")

SUM = "read a b\necho $((a + b))\n"
DIFFERENCE = "read a b\necho $((a - b))\n"
UNCLOSED = 'read a b\nif [ "$a" -gt 0 ]; then\n  echo $((a + b))\n'
TESTS = [TestCase("1 2\n", "3\n"), TestCase("40 2\n", "42\n")]
LIMITS = Limits(1.0, 64 << 20)
# A checker program in the language: accepts an output whose first line is the answer's.
SAME_FIRST_LINE = 'read got < "$2"\nread want < "$3"\n[ "$got" = "$want" ] && exit 0\nexit 1\n'


class ShellExecutor(Executor):
    """dash: "building" is `dash -n` (parse only) in the sandbox; the checked script is
    the cached artifact, run by dash in each test's folder."""

    source_name = "sol.sh"
    output_name = "sol.sh"
    artifacts = "scripts"
    artifact_suffix = ".sh"
    artifact_mode = 0o644
    step = "syntax check"
    no_output = "[the script is gone]"

    def __init__(self, cache_dir: Path, runner: Runner, config: Any = None) -> None:
        assert SHELL is not None
        self.shell = str(Path(SHELL).resolve())
        cfg = self.settings(config, BuildConfig)
        super().__init__(cache_dir / "sh", runner, cfg, digest(self.shell.encode()))

    def build_command(self) -> Command:
        return Command((self.shell, "-n", self.source_name), profile="run")

    def program(self, artifact: Path) -> Program:
        return Program((self.shell, self.source_name), files={self.source_name: artifact})


class Shell(Language):
    name = "sh"
    display_name = "POSIX shell"
    suffixes = (".sh",)
    fence_tags = ("sh", "shell")
    program_pattern = re.compile(r"^\s*read\b", re.MULTILINE)
    closing_token = "fi"

    def executor(self, cache_dir: Path, runner: Runner, config: Any = None) -> ShellExecutor:
        return ShellExecutor(cache_dir, runner, config)


@pytest.fixture
def shell() -> Iterator[Language]:
    language = Shell()
    register(language)
    try:
        yield language
    finally:
        unregister(language.name)
    assert "sh" not in LANGUAGES


def _prompt(language: str | None = None) -> str:
    """A problem's prompt asking for `language` (None: the default language)."""
    extra = {} if language is None else {"language": language}
    messages = build_messages(
        PromptConfig(),
        name="p",
        description="Add.",
        time_limit_seconds=1,
        memory_bytes=1 << 28,
        **extra,
    )
    return messages[-1]["content"]


def test_a_registered_language_is_judged_in_the_sandbox(shell: Language, tmp_path: Path) -> None:
    judge = Judge(tmp_path)
    accepted = judge.judge(SUM, TESTS, LIMITS, language="sh")
    assert accepted.verdict is Verdict.AC, accepted.to_dict()
    assert judge.judge(SUM, TESTS, LIMITS, language="sh").compile.cached
    assert judge.judge(DIFFERENCE, TESTS, LIMITS, language="sh").verdict is Verdict.WA
    refused = judge.judge(UNCLOSED, TESTS, LIMITS, language="sh")
    assert refused.verdict is Verdict.CE and "sol.sh" in refused.compile.diagnostics
    # Its closing token is what the rehearsal removes to break a program.
    assert judge.judge(UNCLOSED + "fi\n", TESTS, LIMITS, language="sh").verdict is Verdict.AC
    # A checker program in the language, built and run by the judge like any other.
    checker = program.config(SAME_FIRST_LINE, "sh")
    loose = [TestCase("1 2\n", "3\nanything\n")]
    assert judge.judge(SUM, loose, LIMITS, checker, language="sh").verdict is Verdict.AC
    assert judge.judge(DIFFERENCE, loose, LIMITS, checker, language="sh").verdict is Verdict.WA


def test_a_registered_language_is_extracted_accepted_and_asked_for(shell: Language) -> None:
    assert language_of(Path("sol.sh")) == "sh"
    tagged = f"Here:\n```shell\n{SUM}```\n"
    assert extract_answer(tagged, ("cpp", "sh")) == extract_answer(tagged, ("sh",))
    found = extract_answer(tagged, ("cpp", "sh"))
    assert found is not None and found.language == "sh" and found.code == SUM.strip()
    untagged = extract_answer(f"```\n{SUM}```", ("sh",))
    assert untagged is not None and untagged.language == "sh"
    refused = extract_answer(tagged, ("cpp",))  # a run that does not accept it
    assert refused is not None and refused.language == "sh"
    assert RewardConfig(languages=["sh"], time_factors={"sh": 2.0}).languages == ["sh"]
    assert "C++" in _prompt()
    assert _prompt("sh") == _prompt().replace("C++", "POSIX shell")


def test_an_unregistered_language_is_refused_everywhere() -> None:
    assert "sh" not in LANGUAGES
    with pytest.raises(ValueError, match="unknown language 'sh'"):
        RewardConfig(languages=["sh"])
    with pytest.raises(ValueError, match="unknown language 'sh'"):
        _prompt("sh")
    assert extract_answer(f"```sh\n{SUM}```", ("cpp",)) is None
