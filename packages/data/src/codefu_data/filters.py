"""Quality filters: pure decisions on one problem's light fields, each with a named reason.

The first failing check names the reason a problem is dropped; `prepare` counts reasons
per tier and split in the manifest. Order: name, description, tests, limits, then the
contest-date window (this module), then cross-split duplicates (`DuplicateIndex`), then the
tier rule (`codefu_data.tiers`).
"""

from __future__ import annotations

import datetime
import hashlib
import re
import unicodedata
from dataclasses import dataclass

from codefu_data.config import DataConfig, parse_date

MISSING_NAME = "missing_name"
EMPTY_DESCRIPTION = "empty_description"
MALFORMED_DESCRIPTION = "malformed_description"
NO_TESTS = "no_tests"
NO_PRIVATE_TESTS = "no_private_tests"
MALFORMED_TESTS = "malformed_tests"
INVALID_TIME_LIMIT = "invalid_time_limit"
INVALID_MEMORY_LIMIT = "invalid_memory_limit"
DUPLICATE_OF_HELDOUT = "duplicate_of_heldout"
DUPLICATE_WITHIN_SPLIT = "duplicate_within_split"
OUTSIDE_DATE_WINDOW = "outside_date_window"
NO_CONTEST_DATE = "no_contest_date"
DateWindow = tuple[datetime.date | None, datetime.date | None]


@dataclass(frozen=True)
class ProblemMeta:
    """The fields the filters look at (tests only as counts, so big tests stay in Arrow)."""

    name: str | None
    description: str | None
    source: int | None
    cf_rating: int | None
    time_limit_seconds: float | None  # seconds + nanos / 1e9; None when the limit is null
    memory_limit_bytes: int | None
    public_tests: int  # number of (input, output) pairs; -1 when inputs and outputs differ in count
    private_tests: int


_LETTER = re.compile(r"[^\W\d_]")


def quality_reason(meta: ProblemMeta, cfg: DataConfig) -> str | None:
    """The reason this problem fails a quality filter, or None when it passes them all."""
    if meta.name is None or not meta.name.strip():
        return MISSING_NAME
    if meta.description is None or not meta.description.strip():
        return EMPTY_DESCRIPTION
    text = meta.description.strip()
    if len(text) < cfg.min_description_chars or not _LETTER.search(text):
        return MALFORMED_DESCRIPTION
    if meta.public_tests < 0 or meta.private_tests < 0:
        return MALFORMED_TESTS
    if meta.public_tests == 0 and meta.private_tests == 0:
        return NO_TESTS
    if meta.private_tests == 0:
        return NO_PRIVATE_TESTS
    t = meta.time_limit_seconds
    if t is None or not t > 0 or t > cfg.max_time_limit_seconds:
        return INVALID_TIME_LIMIT
    m = meta.memory_limit_bytes
    if m is None or m < cfg.min_memory_limit_bytes or m > cfg.max_memory_limit_bytes:
        return INVALID_MEMORY_LIMIT
    return None


def window_reason(contest_date: str | None, window: DateWindow) -> str | None:
    """Why a problem falls outside the contest-date window (`config.date_window`), or None:
    its date is before or after it, or it has no (readable) date while a window is set."""
    low, high = window
    if low is None and high is None:
        return None
    try:
        day = parse_date(contest_date) if contest_date else None
    except ValueError:
        day = None
    if day is None:
        return NO_CONTEST_DATE
    if (low is not None and day < low) or (high is not None and day > high):
        return OUTSIDE_DATE_WINDOW
    return None


def normalize_name(name: str) -> str:
    """Case- and whitespace-insensitive problem name."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def statement_key(description: str) -> str | None:
    """Digest of the statement with case, whitespace and punctuation removed (None if empty)."""
    text = unicodedata.normalize("NFKC", description).casefold()
    kept = "".join(ch for ch in text if ch.isalnum())
    if not kept:
        return None
    return hashlib.sha256(kept.encode()).hexdigest()


class DuplicateIndex:
    """Cross-split and within-split duplicates, by normalized name and by normalized statement.

    Built in a first pass over names and statements only. A problem of a non-held-out split
    whose name or statement also occurs in the held-out split is a `duplicate_of_heldout`
    (held-out problems never leak into training); a later occurrence of the same problem
    within one split is a `duplicate_within_split` (the first is kept).
    """

    def __init__(self, heldout_split: str) -> None:
        self.heldout_split = heldout_split
        self._heldout: set[str] = set()
        self._seen: dict[str, dict[str, int]] = {}  # split → key → first ordinal

    @staticmethod
    def keys(name: str | None, description: str | None) -> list[str]:
        keys = []
        if name and name.strip():
            keys.append("n:" + normalize_name(name))
        if description:
            sk = statement_key(description)
            if sk:
                keys.append("s:" + sk)
        return keys

    def add(self, split: str, ordinal: int, name: str | None, description: str | None) -> None:
        """Record row `ordinal` (a position unique within `split`)."""
        seen = self._seen.setdefault(split, {})
        for key in self.keys(name, description):
            seen.setdefault(key, ordinal)
            if split == self.heldout_split:
                self._heldout.add(key)

    def reason(
        self, split: str, ordinal: int, name: str | None, description: str | None
    ) -> str | None:
        keys = self.keys(name, description)
        if split != self.heldout_split and any(k in self._heldout for k in keys):
            return DUPLICATE_OF_HELDOUT
        seen = self._seen.get(split, {})
        if any(seen.get(k, ordinal) < ordinal for k in keys):
            return DUPLICATE_WITHIN_SPLIT
        return None
