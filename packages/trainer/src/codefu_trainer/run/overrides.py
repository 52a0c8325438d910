"""Hydra override strings: routing between our config and veRL's, validation, formatting."""

from __future__ import annotations

import dataclasses
import difflib
import enum
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig

from codefu_data.compose import did_you_mean, dotted_keys
from codefu_trainer.run.config import OUR_KEYS

VERL_PREFIX = "verl."


class ConfigError(ValueError):
    """A configuration problem of `codefu-train`/`codefu-eval` (exit 2); the message says
    which key or option and what is valid."""


_OVERRIDE = re.compile(r"^(?P<op>\+\+|\+|~)?(?P<key>[^=~+][^=]*?)(?:=(?P<value>.*))?$", re.S)


@dataclass(frozen=True)
class Override:
    text: str
    op: str  # "", "+", "++" or "~"
    key: str  # dotted key or group name (may carry @package)
    value: str | None

    @property
    def first_key(self) -> str:
        return re.split(r"[.@/]", self.key, maxsplit=1)[0]

    def with_key(self, key: str) -> Override:
        value = "" if self.value is None else f"={self.value}"
        return Override(f"{self.op}{key}{value}", self.op, key, self.value)


def one_line(error: Exception) -> str:
    """An error's message on one line (Hydra's messages span several)."""
    return " ".join(line.strip() for line in str(error).splitlines() if line.strip())


def schema_error(error: BaseException) -> str | None:
    """A value that does not fit its key's type (or a key left without one), in a user's
    words: the key, the type it takes and an example of a right value. None when `error`
    (or what caused it) is no such OmegaConf error."""
    from omegaconf.errors import MissingMandatoryValue, ValidationError

    found: BaseException | None = error
    while found is not None and not isinstance(found, ValidationError | MissingMandatoryValue):
        found = found.__cause__ or found.__context__
    if found is None or not getattr(found, "full_key", None):
        return None
    key, name = str(found.full_key), str(found.key)
    kind, default = _field(found.parent_node, name)
    takes = f"{key} takes {_describe(kind)}, e.g. {_example(key, kind, default)}"
    if isinstance(found, MissingMandatoryValue):
        return f"{key} has no value: {takes}."
    return f"{key}={_shown(found.value)}: {takes}."


def _field(parent: Any, name: str) -> tuple[Any, Any]:
    """The declared type of key `name` under `parent` (a structured node or a typed
    mapping/list) and its default (None when it has none)."""
    from omegaconf import OmegaConf

    if parent is None:
        return Any, None
    owner = OmegaConf.get_type(parent)
    if owner is not None and dataclasses.is_dataclass(owner):
        hints = typing.get_type_hints(owner)
        for f in dataclasses.fields(owner):
            if f.name == name:
                default = f.default
                if f.default_factory is not dataclasses.MISSING:
                    default = f.default_factory()
                return hints.get(name, Any), None if default is dataclasses.MISSING else default
        return Any, None
    args = typing.get_args(getattr(parent._metadata, "ref_type", None))
    return (args[-1] if args else Any), None


def _optional(kind: Any) -> tuple[Any, bool]:
    """(the type without None, whether None is allowed)."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        return (args[0] if len(args) == 1 else Any), type(None) in typing.get_args(kind)
    return kind, False


_PLURAL = {bool: "true/false values", int: "integers", float: "numbers", str: "strings"}


def _describe(kind: Any) -> str:
    inner, nullable = _optional(kind)
    origin = typing.get_origin(inner)
    if isinstance(inner, type) and issubclass(inner, enum.Enum):
        text = "one of " + ", ".join(m.name for m in inner)
    elif dataclasses.is_dataclass(inner):
        text = "its settings as keys, not a value"
    elif inner is bool:
        text = "true or false"
    elif inner is int:
        text = "an integer"
    elif inner is float:
        text = "a number"
    elif inner is str:
        text = "a string"
    elif origin in (list, tuple, dict):
        args = typing.get_args(inner)
        each = _PLURAL.get(args[-1], "values") if args else "values"
        text = f"a list of {each}" if origin is not dict else f"a mapping of names to {each}"
    else:
        text = "a value"
    return f"{text} or null" if nullable else text


def _example(key: str, kind: Any, default: Any) -> str:
    """`KEY=VALUE` with the key's default, or a value of its type."""
    inner, _ = _optional(kind)
    if dataclasses.is_dataclass(inner):
        first = next(
            (f for f in dataclasses.fields(inner) if f.default is not dataclasses.MISSING), None
        )
        if first is not None:
            return _example(f"{key}.{first.name}", type(first.default), first.default)
    if isinstance(default, enum.Enum):
        return f"{key}={default.name}"
    if default is not None and not dataclasses.is_dataclass(default):
        try:
            return f"{key}={hydra_value(default)}"
        except TypeError:
            pass
    if isinstance(inner, type) and issubclass(inner, enum.Enum):
        return f"{key}={next(iter(inner)).name}"
    samples = {bool: "true", int: "1", float: "0.5", str: "text"}
    origin = typing.get_origin(inner)
    if origin in (list, tuple):
        return f"{key}=[{samples.get(next(iter(typing.get_args(inner)), str), 'x')}]"
    if origin is dict:
        return f"{key}.NAME={samples.get(typing.get_args(inner)[-1], 'x')}"
    return f"{key}={samples.get(inner, 'VALUE')}"


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def parse_override(text: str) -> Override:
    m = _OVERRIDE.match(text.strip())
    if not m or (m["value"] is None and m["op"] != "~"):
        raise ConfigError(
            f"Cannot read override {text!r}: write KEY=VALUE (e.g. cluster=cpu, "
            "trainer.total_epochs=1), +KEY=VALUE to add a key, or ~KEY to delete one."
        )
    return Override(text.strip(), m["op"] or "", m["key"].strip(), m["value"])


def as_typed(verl_key: str) -> str:
    """A veRL config key as a user types it: with `verl.` where its first key is also ours."""
    return VERL_PREFIX + verl_key if verl_key.split(".", 1)[0] in OUR_KEYS else verl_key


def split_overrides(texts: Iterable[str]) -> tuple[list[Override], list[Override]]:
    """(ours, veRL's): an override whose first key is ours goes to stage 1; `verl.X` and
    every other first key go to veRL (stage 2)."""
    ours: list[Override] = []
    theirs: list[Override] = []
    for text in texts:
        ov = parse_override(text)
        if ov.key.startswith(VERL_PREFIX):
            theirs.append(ov.with_key(ov.key[len(VERL_PREFIX) :]))
        elif ov.first_key in (*OUR_KEYS, "hydra"):
            ours.append(ov)
        else:
            theirs.append(ov)
    return ours, theirs


def group_options(conf_dir: Path, group: str) -> list[str]:
    """Option names of a config group: the yaml files in conf/<group>/."""
    return sorted(p.stem for p in (conf_dir / group).glob("*.yaml"))


def check_group_choices(
    conf_dir: Path, overrides: Sequence[Override], groups: Sequence[str]
) -> None:
    """`group=option` where the option file does not exist → error listing valid options."""
    for ov in overrides:
        if ov.key in groups and ov.op != "~" and ov.value is not None:
            options = group_options(conf_dir, ov.key)
            if ov.value not in options:
                hint = _close(ov.value, options)
                raise ConfigError(
                    f"{ov.text}: {ov.value!r} is not an option of the config group '{ov.key}'"
                    f"{hint}. Valid options: {', '.join(options)} (files in {conf_dir / ov.key})."
                )


def check_keys(
    base: DictConfig,
    overrides: Sequence[Override],
    where: str,
    prefix: str = "",
    *,
    other_keys: Callable[[], Iterable[str]] | None = None,
    typed: Callable[[str], str] = str,
) -> None:
    """A dotted override whose key is not in `base` → error naming it and the valid keys there,
    with the closest full dotted names of `base` and of `other_keys()` (the other stage's keys;
    asked for only when a key is wrong), each as a user types it (`typed` maps a key of
    `base` to that: veRL's `data.X` is typed `verl.data.X`).

    `+KEY` (add) and `++KEY` (add or set) overrides are allowed to create keys.
    """
    for ov in overrides:
        if ov.op in ("+", "++") or "@" in ov.key or "/" in ov.key:
            continue
        node: Any = base
        walked: list[str] = []
        for part in ov.key.split("."):
            if isinstance(node, DictConfig):
                keys = [str(k) for k in node]
                if part not in keys:
                    here = (
                        prefix + ".".join(walked)
                        if walked
                        else (prefix.rstrip(".") or "the top level")
                    )
                    space = [
                        *map(typed, dotted_keys(base, prefix)),
                        *(other_keys() if other_keys else ()),
                    ]
                    raise ConfigError(
                        f"{ov.text}: {part!r} is not a key of {here} in {where}"
                        f"{did_you_mean(typed(prefix + ov.key), space)}. "
                        f"Valid keys there: {', '.join(sorted(keys))}."
                    )
                node = node._get_node(part)
                if node is not None and not isinstance(node, DictConfig | ListConfig):
                    node = node._value() if hasattr(node, "_value") else node
            elif isinstance(node, ListConfig) and part.isdigit():
                node = node[int(part)] if int(part) < len(node) else None
            else:
                break  # below a leaf or a list: let Hydra judge
            walked.append(part)


def _close(word: str, candidates: Sequence[str]) -> str:
    match = difflib.get_close_matches(word, list(candidates), n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""


def hydra_value(value: Any) -> str:
    """Format a Python value as a Hydra override value (strings quoted)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        if "${" in value:
            raise ValueError(f"{value!r} would be read as an interpolation; avoid '${{' in values.")
        # Hydra's quoted strings: backslashes are literal except before a quote (or the
        # closing quote), where each must be doubled; a quote is escaped as \'.
        escaped = re.sub(r"(\\+)(?='|$)", lambda m: m.group(1) * 2, value).replace("'", "\\'")
        return f"'{escaped}'"
    if isinstance(value, Mapping):
        inner = ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    raise TypeError(f"Cannot format {value!r} as a Hydra override value.")
