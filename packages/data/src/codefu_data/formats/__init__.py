"""The source formats `prepare` reads, keyed by name (`data.format`; "auto" detects each
file's format from its columns). Each format is one module with one `SourceFormat`
(`formats.base`); adding a format is that module and one `register` line below.
"""

from __future__ import annotations

from collections.abc import Collection

from codefu_data.formats.base import FileColumn, FormatError, ReadOptions, SourceFormat
from codefu_data.formats.codecontests import CodeContests
from codefu_data.formats.deepcoder import DeepCoder
from codefu_data.formats.livecodebench import LiveCodeBench
from codefu_data.formats.primeintellect import PrimeIntellect
from codefu_data.formats.taco import Apps, Taco
from codefu_data.formats.verl import Verl

AUTO = "auto"
DEFAULT_OPTIONS = ReadOptions()
FORMATS: dict[str, SourceFormat] = {}


def register(fmt: SourceFormat) -> SourceFormat:
    """Add `fmt` to the registry under its name (ValueError when the name is taken)."""
    if fmt.name in FORMATS or fmt.name == AUTO:
        raise ValueError(f"a source format named {fmt.name!r} is already registered")
    FORMATS[fmt.name] = fmt
    return fmt


def by_name(name: str) -> SourceFormat:
    """The format registered as `name`; FormatError naming the choices otherwise."""
    if name not in FORMATS:
        raise FormatError(
            f"unknown format {name!r}: use {AUTO} or one of {', '.join(sorted(FORMATS))}"
        )
    return FORMATS[name]


def detect(columns: Collection[str]) -> SourceFormat:
    """The format of a file with these columns: the one whose key columns it all has, else
    the one sharing most key columns with it (its own check then names what is missing).
    FormatError when none shares a column, or when the choice is ambiguous."""
    names = set(columns)
    found = [fmt for fmt in FORMATS.values() if fmt.detect(names)]
    if not found:
        shared = {fmt.name: len(fmt.key_columns & names) for fmt in FORMATS.values()}
        best = max(shared.values(), default=0)
        found = [FORMATS[name] for name, n in shared.items() if n == best and best > 0]
    if len(found) == 1:
        return found[0]
    known = "; ".join(
        f"{fmt.name}: {', '.join(sorted(fmt.key_columns))}" for fmt in FORMATS.values()
    )
    if not found:
        listed = ", ".join(sorted(names)[:12]) or "none"
        raise FormatError(f"its columns ({listed}) are of no known format ({known})")
    raise FormatError(
        f"its columns fit the formats {', '.join(f.name for f in found)}: set data.format to one"
    )


register(CodeContests())
register(Verl())
register(LiveCodeBench())
register(Taco())
register(Apps())
register(PrimeIntellect())
register(DeepCoder())

__all__ = [
    "AUTO",
    "DEFAULT_OPTIONS",
    "FORMATS",
    "FileColumn",
    "FormatError",
    "ReadOptions",
    "SourceFormat",
    "by_name",
    "detect",
]
