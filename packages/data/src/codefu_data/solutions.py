"""The programs CodeContests ships for a problem: accepted (`solutions`) and rejected
(`incorrect_solutions`), per judge language (`programs`), and a problem's C++ ones read from
the raw source by problem name and language (`solutions`).

Prepared parquet files carry prompts and tests only; a consumer that needs programs (the CPU
rehearsal's warm start) reads them here, through the same reader `prepare` uses.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from codefu_data.reader import resolve_source
from codefu_data.schema import SOLUTION_LANGUAGES

SOLUTION_COLUMNS = ("name", "solutions", "incorrect_solutions")


@dataclass
class Solutions:
    """One problem's programs in one language, in the dataset's order."""

    accepted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)


def programs(solutions: dict[str, Any] | None, language: str = "cpp") -> list[str]:
    """The programs in judge language `language` ("cpp": CodeContests' C++, "python": its
    PYTHON3) of a raw `solutions`/`incorrect_solutions` struct, in order."""
    if not solutions:
        return []
    code_of = SOLUTION_LANGUAGES[language]
    langs = solutions.get("language") or []
    codes = solutions.get("solution") or []
    return [code for lang, code in zip(langs, codes, strict=False) if lang == code_of and code]


def solutions(source: str, names: Collection[str], language: str = "cpp") -> dict[str, Solutions]:
    """Accepted and rejected programs in judge language `language` ("cpp", "python") of the
    named problems in the raw `source` ("sample", a directory of shards, a file or a hub id;
    see `resolve_source`).

    A name missing from the source is missing from the result; a name in several raw splits
    keeps the first occurrence.
    """
    wanted = set(names)
    src = resolve_source(source)
    src.check_columns(SOLUTION_COLUMNS)
    out: dict[str, Solutions] = {}
    for batch in src.iter_batches(list(SOLUTION_COLUMNS), batch_size=256):
        for row in batch.table.to_pylist():
            name = row["name"]
            if name in wanted and name not in out:
                out[name] = Solutions(
                    programs(row["solutions"], language),
                    programs(row["incorrect_solutions"], language),
                )
    return out
