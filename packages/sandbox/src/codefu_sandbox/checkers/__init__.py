"""Output checkers: one module per checker, each with one `check(output, expected, *, ...)`.

A checker is its module, named as the module is, registered in `CHECKERS`
(`codefu_sandbox.registry.Registry`) by one entry point in the group `codefu.checkers` that
names the module (the built-ins' are in codefu-sandbox's pyproject.toml), or in this process
by `CHECKERS.register(module)`: `get_checker("floats")` is `checkers/floats.py`'s `check`.
Each `check` takes its parameters as keywords plus those the judge supplies (`SUPPLIED`):
`input`, the test's input, and for `program` (a problem's checker program, given as
source) `sandbox`, the judge's `CheckerRunner`, which runs the program in its sandbox.
`bind` gives the judge a checker's `check` with its parameters. `check_params` rejects any
other keyword, naming the accepted ones, and a module's optional `validate(params)`
checks their values. A checker that is not a module name but the path of a testlib-style
checker program (or `testlib:PATH`) is run by the judge in its sandbox too.
"""

from __future__ import annotations

import functools
import inspect
import json
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from codefu_sandbox.models import name_and_params
from codefu_sandbox.records import CheckResult
from codefu_sandbox.registry import Registry

# A problem's checker program given as source, run by the judge in its sandbox.
PROGRAM = "program"
# Keywords the judge itself passes: never part of a checker configuration.
SUPPLIED = frozenset({"input", "program", "sandbox"})


Checker = Callable[..., CheckResult]


def _checker_module(found: Any) -> ModuleType:
    if not isinstance(found, ModuleType) or not callable(getattr(found, "check", None)):
        raise ValueError(f"a checker is a module with a check function, got {found!r}")
    return found


CHECKERS: Registry[ModuleType] = Registry(
    "checker",
    "codefu.checkers",
    lambda module: module.__name__.rpartition(".")[2],
    accept=_checker_module,
)


def comparisons() -> list[str]:
    """The registered checkers that compare an output with the expected one: all but the
    checker program (`PROGRAM`), which runs a problem's own."""
    return [name for name in CHECKERS if name != PROGRAM]


def _unknown(name: str) -> ValueError:
    return ValueError(
        f"unknown checker {name!r}: choose one of {', '.join(comparisons())}, "
        "or pass the path of a testlib-style checker program (testlib:PATH)"
    )


def get_checker(name: str) -> Checker:
    """The `check` function of a registered checker; ValueError naming the choices
    otherwise."""
    if name not in CHECKERS:
        raise _unknown(name)
    check: Checker = CHECKERS[name].check
    return check


def bind(name: str, params: Mapping[str, Any], **supplied: Any) -> Checker:
    """Checker module `name`'s `check` with its parameters `params`, and those of the
    judge's `supplied` keywords (`SUPPLIED`, other than `input`) that it takes."""
    check = get_checker(name)
    takes = inspect.signature(check).parameters
    extra = {key: value for key, value in supplied.items() if key in takes}
    return functools.partial(check, **params, **extra)


def param_types(name: str) -> dict[str, Any]:
    """The type of each parameter of checker module `name` (`accepted_params`), from its
    `check`'s annotations: e.g. `{"precision": float}` for `floats`."""
    hints = typing.get_type_hints(get_checker(name))
    return {param: hints[param] for param in accepted_params(name)}


def accepted_params(name: str) -> tuple[str, ...]:
    """The parameters a checker configuration may set for checker `name` (a registered
    checker; any other name is an external program, which takes only `timeout`)."""
    module = _module(name)
    return tuple(
        p.name
        for p in inspect.signature(module.check).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in SUPPLIED
    )


def check_params(name: str, params: Mapping[str, Any]) -> None:
    """Raise ValueError when checker `name` does not take a parameter of `params` (the
    message names the accepted ones) or cannot use its value."""
    accepted = accepted_params(name)
    what = repr(name) if name in CHECKERS else "an external checker program"
    for key in params:
        if key not in accepted:
            choices = ", ".join(accepted) if accepted else "none"
            hint = " (the judge passes each test's input itself)" if key == "input" else ""
            raise ValueError(
                f"checker {what} takes no parameter {key!r}{hint}: its parameters are {choices}"
            )
    validate = getattr(_module(name), "validate", None)
    if validate is not None:
        validate(params)


def _module(name: str) -> ModuleType:
    """The module that defines checker `name`'s parameters (a path: `testlib`)."""
    if name in CHECKERS:
        return CHECKERS[name]
    from codefu_sandbox.checkers import testlib

    return testlib


@dataclass(frozen=True)
class CheckerConfig:
    """A checker and its parameters, e.g. a problem's judging rules:
    `CheckerConfig("codecontests", {"tolerance": 1e-4, "any_case_words": ["YES", "NO"]})`.

    `name` is a registered checker (`checkers.CHECKERS`), `testlib:PATH`, the path of an
    existing checker program, or "program" with the program's `source` and `language`
    in `params` (`checkers.program.config` builds one). Construction raises ValueError
    for an unknown name, a parameter the checker's `check` does not take (naming those it
    takes), or a value it cannot use, so a typo never judges silently under the defaults.
    """

    name: str = "tokens"
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValueError(f"checker name must be a string, got {self.name!r}")
        if not isinstance(self.params, Mapping) or not all(
            isinstance(key, str) for key in self.params
        ):
            raise ValueError(
                f"checker params must map parameter names to values, got {self.params!r}"
            )
        if (
            self.name not in CHECKERS
            and not self.name.startswith("testlib:")
            and not Path(self.name).is_file()
        ):
            raise _unknown(self.name)
        check_params(self.name, self.params)
        object.__setattr__(self, "params", dict(self.params))

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True, default=_json_list))

    def to_dict(self) -> dict[str, Any]:
        """`{"name": ..., "params": {...}}`, JSON-able (word collections become lists): the
        form a configuration is stored in (a ground truth's `checker`, a JSON file)."""
        params = {
            key: _json_list(value) if isinstance(value, tuple | set | frozenset) else value
            for key, value in self.params.items()
        }
        return {"name": self.name, "params": params}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckerConfig:
        """The inverse of `to_dict`; `params` may be left out. ValueError on any other shape."""
        name, params = name_and_params(data, "checker")
        return cls(name, {} if params is None else params)


def _json_list(value: Any) -> list[Any]:
    """A set or tuple as a JSON list (sets sorted, so equal configurations hash equal)."""
    if isinstance(value, set | frozenset):
        return sorted(value)
    return list(value)


def mismatch(what: str, got: str, want: str) -> str:
    """A short message naming the first difference."""
    return f"{what}: got {got[:40]!r}, expected {want[:40]!r}"


__all__ = [
    "CHECKERS",
    "PROGRAM",
    "SUPPLIED",
    "CheckResult",
    "Checker",
    "CheckerConfig",
    "accepted_params",
    "bind",
    "check_params",
    "comparisons",
    "get_checker",
    "mismatch",
    "param_types",
]
