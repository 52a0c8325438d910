from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from codefu_data import filters as F
from codefu_data.config import DataConfig
from codefu_data.filters import DuplicateIndex, ProblemMeta, quality_reason, statement_key

CFG = DataConfig()
GOOD = ProblemMeta(
    name="1_A. Sum",
    description="Given two integers a and b, print their sum.",
    source=2,
    cf_rating=800,
    time_limit_seconds=1.0,
    memory_limit_bytes=256_000_000,
    public_tests=1,
    private_tests=3,
)


def with_(**changes: object) -> ProblemMeta:
    return dataclasses.replace(GOOD, **changes)


def test_good_problem_passes() -> None:
    assert quality_reason(GOOD, CFG) is None


def test_each_defect_has_its_reason() -> None:
    cases = {
        F.MISSING_NAME: with_(name=" "),
        F.EMPTY_DESCRIPTION: with_(description="\n \t"),
        F.MALFORMED_DESCRIPTION: with_(description="1 2 3 4 5 6 7 8 9 10 11 12"),
        F.NO_TESTS: with_(public_tests=0, private_tests=0),
        F.NO_PRIVATE_TESTS: with_(private_tests=0),
        F.MALFORMED_TESTS: with_(private_tests=-1),
        F.INVALID_TIME_LIMIT: with_(time_limit_seconds=None),
        F.INVALID_MEMORY_LIMIT: with_(memory_limit_bytes=10**12),
    }
    for reason, meta in cases.items():
        assert quality_reason(meta, CFG) == reason, reason
    assert quality_reason(with_(description=None), CFG) == F.EMPTY_DESCRIPTION
    assert quality_reason(with_(description="too short"), CFG) == F.MALFORMED_DESCRIPTION
    assert quality_reason(with_(time_limit_seconds=0.0), CFG) == F.INVALID_TIME_LIMIT
    assert quality_reason(with_(time_limit_seconds=61.0), CFG) == F.INVALID_TIME_LIMIT
    assert quality_reason(with_(memory_limit_bytes=0), CFG) == F.INVALID_MEMORY_LIMIT
    assert quality_reason(with_(memory_limit_bytes=None), CFG) == F.INVALID_MEMORY_LIMIT


@given(
    st.floats(min_value=0.001, max_value=60.0),
    st.integers(min_value=1_000_000, max_value=4_294_967_296),
)
def test_any_sane_limits_pass(seconds: float, memory: int) -> None:
    assert quality_reason(with_(time_limit_seconds=seconds, memory_limit_bytes=memory), CFG) is None


@given(st.text(min_size=1), st.lists(st.sampled_from([" ", "\n", "\t", ",", ".", "!"]), max_size=5))
def test_statement_key_ignores_case_space_and_punctuation(text: str, noise: list[str]) -> None:
    noisy = "".join(noise) + text.upper() + "".join(noise)
    key = statement_key(text)
    if key is not None and text.upper().casefold() == text.casefold():
        assert statement_key(noisy) == key


def test_statement_key_distinguishes_statements() -> None:
    assert statement_key("print a+b") != statement_key("print a-b c")
    assert statement_key(" ,. ") is None


def test_duplicates_stay_only_in_heldout_split() -> None:
    idx = DuplicateIndex("test")
    idx.add("train", 0, "1_A. Sum", "Print the sum of a and b.")
    idx.add("train", 1, "2_B. Other", "Print the product of a and b.")
    idx.add("train", 2, "2_b.  other", "Completely different words here.")
    idx.add("test", 0, "1_A. Sum", "A rewritten statement of the same problem.")
    idx.add("test", 1, "9_Z. Renamed", "PRINT the product   of a and b!")
    assert idx.reason("train", 0, "1_A. Sum", "Print the sum of a and b.") == F.DUPLICATE_OF_HELDOUT
    assert (
        idx.reason("train", 1, "2_B. Other", "Print the product of a and b.")
        == F.DUPLICATE_OF_HELDOUT
    )
    assert (
        idx.reason("train", 2, "2_b.  other", "Completely different words here.")
        == F.DUPLICATE_WITHIN_SPLIT
    )
    assert idx.reason("test", 0, "1_A. Sum", "A rewritten statement of the same problem.") is None
    assert idx.reason("test", 1, "9_Z. Renamed", "PRINT the product   of a and b!") is None
