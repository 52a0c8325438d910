"""The source formats `prepare` reads, keyed by name (`data.format`; "auto" detects each
file's format from its columns). Each format is one module with one `SourceFormat`
(`formats.base`), registered in `FORMATS` (`codefu_sandbox.registry.Registry`) by one entry
point in the group `codefu.formats` naming its class or an instance (the built-ins' are in
codefu-data's pyproject.toml), or in this process by `register(MyFormat())`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from codefu_data.formats.base import FileColumn, FormatError, ReadOptions, SourceFormat
from codefu_sandbox.registry import Registry

AUTO = "auto"
DEFAULT_OPTIONS = ReadOptions()


def _source_format(found: Any) -> SourceFormat:
    fmt = found() if isinstance(found, type) and issubclass(found, SourceFormat) else found
    if not isinstance(fmt, SourceFormat):
        raise ValueError(f"a source format is a SourceFormat, got {found!r}")
    if fmt.name == AUTO:
        raise ValueError(f"{AUTO!r} is data.format's word for detecting the format")
    return fmt


FORMATS: Registry[SourceFormat] = Registry(
    "source format", "codefu.formats", lambda fmt: fmt.name, accept=_source_format
)
register = FORMATS.register
unregister = FORMATS.unregister


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
    "register",
    "unregister",
]
