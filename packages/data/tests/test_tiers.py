from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_data.config import DataConfig, TierRange, check_config
from codefu_data.tiers import (
    CF_RATING_BELOW_MIN,
    CF_RATING_MISSING,
    CF_RATING_OUTSIDE_TIERS,
    NOT_CODEFORCES,
    assign_tier,
)

CFG = DataConfig()


def test_default_tier_boundaries() -> None:
    assert assign_tier(2, 800, CFG) == ("easy", None)
    assert assign_tier(2, 1000, CFG) == ("easy", None)
    assert assign_tier(2, 1100, CFG) == ("hard", None)
    assert assign_tier(2, 2200, CFG) == ("hard", None)
    assert assign_tier(2, 2300, CFG) == ("expert", None)
    assert assign_tier(2, 3500, CFG) == ("expert", None)
    assert assign_tier(2, 1050, CFG) == (None, CF_RATING_OUTSIDE_TIERS)
    assert assign_tier(2, 3600, CFG) == (None, CF_RATING_OUTSIDE_TIERS)
    assert assign_tier(2, 700, CFG) == (None, CF_RATING_BELOW_MIN)
    assert assign_tier(2, 0, CFG) == (None, CF_RATING_MISSING)
    assert assign_tier(2, None, CFG) == (None, CF_RATING_MISSING)


def test_other_sources_rule() -> None:
    assert assign_tier(1, 0, CFG) == (None, NOT_CODEFORCES)
    assert assign_tier(None, 900, CFG) == (None, NOT_CODEFORCES)
    cfg = DataConfig(other_sources="hard")
    assert assign_tier(5, 0, cfg) == ("hard", None)
    assert assign_tier(2, 900, cfg) == ("easy", None)


@given(st.integers(min_value=-100, max_value=5000))
def test_a_rating_gets_its_containing_tier_or_a_reason(rating: int) -> None:
    tier, reason = assign_tier(2, rating, CFG)
    assert (tier is None) != (reason is None)
    if tier is not None:
        rng = CFG.tiers[tier]
        assert rng.min_rating <= rating <= rng.max_rating
    else:
        assert all(not r.min_rating <= rating <= r.max_rating for r in CFG.tiers.values())


def test_configured_ranges_are_used_and_checked() -> None:
    cfg = DataConfig(tiers={"low": TierRange(500, 1500), "high": TierRange(1600, 4000)}, tier="low")
    check_config(cfg)
    assert assign_tier(2, 600, cfg) == ("low", None)
    assert assign_tier(2, 3900, cfg) == ("high", None)
    with pytest.raises(ValueError, match="overlaps"):
        check_config(
            DataConfig(tiers={"a": TierRange(800, 1200), "b": TierRange(1200, 2000)}, tier="a")
        )
    with pytest.raises(ValueError, match="not a defined tier"):
        check_config(DataConfig(tier="medium"))
    with pytest.raises(ValueError, match="other_sources"):
        check_config(DataConfig(other_sources="somewhere"))
