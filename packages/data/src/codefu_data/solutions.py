"""The programs CodeContests ships for a problem: accepted (`solutions`) and rejected
(`incorrect_solutions`), per judge language (`programs`), and a problem's ones in a language
read from the raw source by problem name (`solutions`).

Prepared parquet files carry prompts and tests only; a consumer that needs programs (the CPU
rehearsal's warm start) reads them here, through the same reader `prepare` uses.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from codefu_data.reader import resolve_source
from codefu_data.schema import CODECONTESTS_LANGUAGES
from codefu_sandbox.languages import DEFAULT_LANGUAGE, for_alias, get

SOLUTION_COLUMNS = ("name", "solutions", "incorrect_solutions")


@dataclass
class Solutions:
    """One problem's programs in one language, in the dataset's order."""

    accepted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)


def solution_codes(language: str) -> frozenset[int]:
    """CodeContests' solution `language` codes of judge language `language`: those whose
    label it claims (C++: "CPP"; Python 3: "PYTHON3"). ValueError for an unknown language."""
    wanted = get(language)
    return frozenset(
        code for code, label in CODECONTESTS_LANGUAGES.items() if for_alias(label) is wanted
    )


def programs(solutions: dict[str, Any] | None, language: str = DEFAULT_LANGUAGE) -> list[str]:
    """The programs in judge language `language` (those CodeContests labels as it,
    `solution_codes`) of a raw `solutions`/`incorrect_solutions` struct, in order."""
    if not solutions:
        return []
    codes_of = solution_codes(language)
    langs = solutions.get("language") or []
    codes = solutions.get("solution") or []
    return [code for lang, code in zip(langs, codes, strict=False) if lang in codes_of and code]


def solutions(
    source: str, names: Collection[str], language: str = DEFAULT_LANGUAGE
) -> dict[str, Solutions]:
    """Accepted and rejected programs in judge language `language` of the
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
