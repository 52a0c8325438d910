"""`codefu-judge SOURCE --tests TESTS.json --time-limit SECONDS --memory-limit BYTES|256M`.

SOURCE is in a registered language (`--language`, e.g. cpp or python), else the one its
suffix names (.py: Python 3; any suffix no language claims: C++); `--time-factor` overrides
that language's time factor.

The checker is `--checker NAME` or `--checker-config JSON|PATH` (a problem's rules:
`{"name": "codecontests", "params": {"tolerance": 1e-4}}`, inline or in a file). The
grader, how each test runs and compares, is `--grader NAME` or `--grader-config JSON|PATH`
(default stdio: stdin → stdout → the checker; a call-based problem's:
`{"name": "call", "params": {"fn_name": "twoSum"}}`, each test's input the JSON array of
the arguments, its output the JSON of the value).
Prints the JSON report on stdout. Exit 0 when judging happened (whatever the verdict),
2 on bad usage or an unreadable/malformed input file (the message names the file),
1 when the judge itself cannot work on this host (e.g. no g++).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from codefu_sandbox.checkers import CheckerConfig
from codefu_sandbox.graders import GRADERS, GraderConfig, grader_config
from codefu_sandbox.languages import LANGUAGES, language_of
from codefu_sandbox.models import Limits, TestCase, parse_memory

Config = TypeVar("Config")
USAGE_ERROR = 2
# Longer per-test limits are typos (ms for s); the sandbox's timers also overflow past ~1e8 s.
MAX_TIME_LIMIT_S = 3600.0


class InputError(Exception):
    """A user input problem (exit 2)."""


def load_tests(path: Path) -> list[TestCase]:
    """Tests from `{"input": [...], "output": [...]}` or `[{"input": ..., "output": ...}, ...]`."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read tests file {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"tests file {path} is not valid JSON: {exc}") from None
    shape = (
        f'tests file {path} must be {{"input": [...], "output": [...]}} '
        'or [{"input": ..., "output": ...}, ...]'
    )
    pairs: list[tuple[Any, Any]]
    if isinstance(data, dict):
        inputs, outputs = data.get("input"), data.get("output")
        if not isinstance(inputs, list) or not isinstance(outputs, list):
            raise InputError(shape)
        if len(inputs) != len(outputs):
            raise InputError(
                f"tests file {path} has {len(inputs)} inputs but {len(outputs)} outputs"
            )
        pairs = list(zip(inputs, outputs, strict=True))
    elif isinstance(data, list):
        if not all(isinstance(t, dict) and "input" in t and "output" in t for t in data):
            raise InputError(shape)
        pairs = [(t["input"], t["output"]) for t in data]
    else:
        raise InputError(shape)
    if not all(isinstance(i, str) and isinstance(o, str) for i, o in pairs):
        raise InputError(f"tests file {path}: every input and output must be a string")
    if not pairs:
        raise InputError(f"tests file {path} holds no tests: a judge without tests proves nothing")
    return [TestCase(i, o) for i, o in pairs]


def load_checker_config(text: str) -> CheckerConfig:
    """A `CheckerConfig` from inline JSON text, or from the JSON file at that path."""
    return _load_config(text, "checker", '{"name": "codecontests"}', CheckerConfig.from_dict)


def load_grader_config(text: str) -> GraderConfig:
    """A `GraderConfig` from inline JSON text, or from the JSON file at that path."""
    return _load_config(text, "grader", '{"name": "stdio"}', GraderConfig.from_dict)


def _load_config(text: str, what: str, example: str, parse: Callable[[Any], Config]) -> Config:
    """`--<what>-config` (inline JSON, or a JSON file's path) parsed by `parse`; InputError
    naming where it came from."""
    source = f"--{what}-config"
    if not text.lstrip().startswith("{"):
        path = Path(text)
        source = f"{what} config file {path}"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(
                f"cannot read {what} config file {path}: {exc.strerror or exc} "
                f"(give a JSON file or inline JSON such as {example})"
            ) from None
        except UnicodeDecodeError as exc:
            raise InputError(f"{source} is not valid JSON: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{source} is not valid JSON: {exc}") from None
    try:
        return parse(data)
    except ValueError as exc:
        raise InputError(f"{source}: {exc}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codefu-judge",
        description="Compile a solution (C++, Python 3 or another registered language) and "
        "judge it against tests in the sandbox; prints the JSON report.",
    )
    parser.add_argument("source", type=Path, metavar="SOURCE.cpp|SOURCE.py")
    parser.add_argument(
        "--language",
        choices=list(LANGUAGES),
        default=None,
        help="the source's language (default: the one its suffix names: python for a .py "
        "file; else cpp)",
    )
    parser.add_argument(
        "--time-factor",
        type=float,
        default=None,
        metavar="X",
        help="the factor on the time limit for this language (default: the judge's, "
        "docs/languages.md)",
    )
    parser.add_argument("--tests", type=Path, required=True, metavar="TESTS.json")
    parser.add_argument("--time-limit", type=float, required=True, metavar="SECONDS")
    parser.add_argument("--memory-limit", required=True, metavar="BYTES|256M")
    checker = parser.add_mutually_exclusive_group()
    # No default here: argparse would take an explicit `--checker tokens` for the default
    # and let it pass beside --checker-config; main() falls back to "tokens".
    checker.add_argument(
        "--checker",
        metavar="NAME",
        help="a built-in checker or a checker program path (default tokens)",
    )
    checker.add_argument(
        "--checker-config",
        metavar="JSON|PATH",
        help='{"name": CHECKER, "params": {...}} as inline JSON or a JSON file',
    )
    grader = parser.add_mutually_exclusive_group()
    grader.add_argument(
        "--grader",
        choices=list(GRADERS),
        default=None,
        help="how each test runs and compares (default stdio: stdin, stdout, the checker)",
    )
    grader.add_argument(
        "--grader-config",
        metavar="JSON|PATH",
        help='{"name": GRADER, "params": {...}} as inline JSON or a JSON file',
    )
    parser.add_argument("--stop-on-first-failure", action="store_true")
    parser.add_argument("--cache-dir", type=Path, default=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # exits 2 on bad usage
    try:
        try:
            source = args.source.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            raise InputError(
                f"cannot read source file {args.source}: {exc.strerror or exc}"
            ) from None
        tests = load_tests(args.tests)
        try:
            limits = Limits(args.time_limit, parse_memory(args.memory_limit))
        except ValueError as exc:
            raise InputError(str(exc)) from None
        if limits.time_seconds > MAX_TIME_LIMIT_S:
            raise InputError(
                f"--time-limit {args.time_limit:g} is over {MAX_TIME_LIMIT_S:g} seconds: give "
                "the per-test limit in seconds (e.g. 2)"
            )
        if args.cache_dir is not None:
            try:
                args.cache_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(
                    f"--cache-dir {args.cache_dir}: cannot use it as a directory "
                    f"({exc.strerror or exc}); give a writable directory"
                ) from None
        checker: str | CheckerConfig
        if args.checker_config is not None:
            checker = load_checker_config(args.checker_config)
        else:
            from codefu_sandbox.checkers import comparisons

            args.checker = args.checker or "tokens"
            if (
                args.checker not in comparisons()
                and not Path(args.checker.removeprefix("testlib:")).is_file()
            ):
                raise InputError(
                    f"unknown checker {args.checker!r}: choose one of {', '.join(comparisons())} "
                    "or give a checker program path"
                )
            checker = args.checker
        try:
            grader = (
                load_grader_config(args.grader_config)
                if args.grader_config is not None
                else grader_config(args.grader)
            )
        except ValueError as exc:  # a grader that needs parameters (`call`: fn_name)
            raise InputError(str(exc)) from None
    except InputError as exc:
        print(f"codefu-judge: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    from codefu_sandbox.judge import Judge
    from codefu_sandbox.runner import SandboxError

    language = args.language or language_of(args.source)
    factors = {} if args.time_factor is None else {language: args.time_factor}
    try:
        judge = Judge(args.cache_dir, time_factors=factors)
        report = judge.judge(
            source,
            tests,
            limits,
            checker,
            args.stop_on_first_failure,
            language=language,
            grader=grader,
        )
    except SandboxError as exc:
        print(f"codefu-judge: cannot judge on this host: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"codefu-judge: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    try:
        json.dump(report.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `codefu-judge … | head`: the reader left; not an error
        sys.stderr.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
