"""Graders: how a submission's tests are run and compared, one module per grader (DMOJ's
shape: standard, interactive and signature graders beside executors and checkers).

`stdio` (the default): each test's input on stdin, its stdout compared by the checker.
`call` (Python): each test calls the function the problem names; the returned value,
serialised inside the sandbox, is compared outside it.
A grader is a module `graders/<name>.py` whose `GRADER` is a `base.Grader` subclass,
registered in `GRADERS` (`codefu_sandbox.registry.Registry`) by one entry point in the group
`codefu.graders` naming that class (the built-ins' are in codefu-sandbox's pyproject.toml),
or in this process by `GRADERS.register(MyGrader)`; `get_grader(name)` looks one up. A
problem names its grader, with its parameters, by a `GraderConfig` (a ground truth's
`grader`: absent or null is `stdio`). `per_test_run_limits` turns a problem's limits into
one run's (a grader serving a harness under limits of its own: `GradingJob.serve(limits=)`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from codefu_sandbox.graders.base import (
    Grader,
    GradingJob,
    Run,
    ServedProgram,
    per_test_run_limits,
)
from codefu_sandbox.models import name_and_params
from codefu_sandbox.registry import Registry

# The grader of a problem that names none (`stdio.py`'s).
DEFAULT_GRADER = "stdio"


def _grader_class(found: Any) -> type[Grader]:
    if not (isinstance(found, type) and issubclass(found, Grader)):
        raise ValueError(f"a grader is a Grader subclass, got {found!r}")
    return found


GRADERS: Registry[type[Grader]] = Registry(
    "grader", "codefu.graders", lambda grader: grader.name, accept=_grader_class
)


def get_grader(name: str) -> type[Grader]:
    """The `Grader` class registered as `name`; ValueError naming the graders otherwise."""
    return GRADERS.lookup(name)


@dataclass(frozen=True)
class GraderConfig:
    """A grader and its parameters: `GraderConfig("stdio")`. Construction raises ValueError
    for an unknown name or a parameter the grader does not take (naming those it takes)."""

    name: str = DEFAULT_GRADER
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValueError(f"grader name must be a string, got {self.name!r}")
        if not isinstance(self.params, Mapping) or not all(isinstance(k, str) for k in self.params):
            raise ValueError(
                f"grader params must map parameter names to values, got {self.params!r}"
            )
        get_grader(self.name).check_params(self.params)
        object.__setattr__(self, "params", dict(self.params))

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True, default=repr))

    def grader(self) -> Grader:
        """A grader made from this configuration."""
        return get_grader(self.name)(self.params)

    def to_dict(self) -> dict[str, Any]:
        """`{"name": ..., "params": {...}}` (a `--grader-config` file's form)."""
        return {"name": self.name, "params": dict(self.params)}

    def stored(self) -> dict[str, str]:
        """`{"name": ..., "params": "<JSON>"}`: the form a ground truth stores, whatever the
        grader's parameters are (their JSON text, as the grader defines them)."""
        return {"name": self.name, "params": json.dumps(self.params, sort_keys=True)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> GraderConfig:
        """The inverse of `to_dict` and `stored` (params as a mapping or its JSON text);
        None (a ground truth without a grader) is the default grader, a null `params` none,
        and a null parameter one left out (a ground truth prepared before graders stored
        their parameters as JSON has a field for each of a fixed set). ValueError on any
        other shape."""
        if data is None:
            return cls()
        name, params = name_and_params(data, "grader")
        if isinstance(params, str):
            try:
                params = json.loads(params)
            except json.JSONDecodeError as exc:
                raise ValueError(f"grader params are not JSON ({exc}): {params!r}") from None
        params = params or {}
        if not isinstance(params, Mapping):
            raise ValueError(f"grader params must be a mapping, got {params!r}")
        name = DEFAULT_GRADER if name is None else name
        return cls(name, {key: value for key, value in params.items() if value is not None})


def grader_config(grader: str | GraderConfig | None) -> GraderConfig:
    """One `GraderConfig` from a name, a configuration or None (the default grader)."""
    if isinstance(grader, GraderConfig):
        return grader
    return GraderConfig() if grader is None else GraderConfig(grader)


__all__ = [
    "DEFAULT_GRADER",
    "GRADERS",
    "Grader",
    "GraderConfig",
    "GradingJob",
    "Run",
    "ServedProgram",
    "get_grader",
    "grader_config",
    "per_test_run_limits",
]
