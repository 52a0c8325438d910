"""The pass@k estimator against brute-force enumeration of every k-subset of the samples."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_trainer.evaluation.passk import mean_pass_at_k, pass_at_k


@st.composite
def problems(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 12))
    return n, draw(st.integers(0, n)), draw(st.integers(1, n))


@given(problems())
def test_pass_at_k_is_the_fraction_of_k_subsets_holding_a_correct_sample(
    case: tuple[int, int, int],
) -> None:
    n, c, k = case
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(samples, k))
    expected = sum(any(s) for s in subsets) / len(subsets)
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@given(
    st.integers(1, 200).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
    )
)
def test_the_stable_product_equals_the_binomial_form(case: tuple[int, int, int]) -> None:
    n, c, k = case
    assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k), abs=1e-9)


def test_known_values_and_the_average_over_problems() -> None:
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(10, 1, 1) == pytest.approx(0.1)
    assert (
        pass_at_k(10, 6, 5) == 1.0
    )  # fewer than 5 wrong samples: every 5-subset holds a right one
    assert mean_pass_at_k([(4, 0), (4, 4), (4, 2)], 1) == pytest.approx((0 + 1 + 0.5) / 3)
    assert mean_pass_at_k([], 1) == 0.0


@pytest.mark.parametrize(("n", "c", "k"), [(5, 0, 6), (5, 0, 0), (5, 6, 1), (5, -1, 1)])
def test_impossible_arguments_are_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match=r"k|c="):
        pass_at_k(n, c, k)
