"""Output checkers: one module per checker, each with one `check(output, expected, **params)`.

The package is the registry: `get_checker("floats")` imports `checkers/floats.py`.
A checker that is not a module name but a path to a testlib-style checker program
(or `testlib:PATH`) is run by `checkers.testlib`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

BUILTIN = ("tokens", "lines", "exact", "floats", "yesno", "codecontests")


@dataclass(frozen=True)
class CheckResult:
    """A checker's answer: ok, optional partial points in [0, 1], a short message."""

    ok: bool
    message: str = ""
    points: float | None = None
    internal_error: bool = False  # the checker itself failed (→ IE, never the program's fault)


Checker = Callable[..., CheckResult]


def get_checker(name: str) -> Checker:
    """The `check` function of a built-in checker; ValueError naming the choices otherwise."""
    if name not in BUILTIN:
        raise ValueError(
            f"unknown checker {name!r}: choose one of {', '.join(BUILTIN)}, "
            "or pass the path of a testlib-style checker program (testlib:PATH)"
        )
    module = importlib.import_module(f"{__name__}.{name}")
    check: Checker = module.check
    return check


def mismatch(what: str, got: str, want: str) -> str:
    """A short message naming the first difference."""
    return f"{what}: got {got[:40]!r}, expected {want[:40]!r}"


__all__ = ["BUILTIN", "CheckResult", "Checker", "get_checker", "mismatch"]
