"""Difficulty tiers by Codeforces rating, and the rule for problems from other sources.

Rule (configurable in `conf/data/`): a Codeforces problem goes to the tier whose inclusive
[min_rating, max_rating] contains its `cf_rating`; a missing rating (null or 0), a rating
below every tier, or one between/above the tiers drops it with a named reason. Problems from
other sources (CodeChef, AtCoder, …: no Codeforces rating) are dropped as `not_codeforces`
when `data.other_sources=exclude` (default) or all placed in the tier `data.other_sources`
names.
"""

from __future__ import annotations

from codefu_data.config import DataConfig
from codefu_data.schema import CODEFORCES_SOURCE

NOT_CODEFORCES = "not_codeforces"
CF_RATING_MISSING = "cf_rating_missing"
CF_RATING_BELOW_MIN = "cf_rating_below_min"
CF_RATING_OUTSIDE_TIERS = "cf_rating_outside_tiers"


def assign_tier(
    source: int | None, cf_rating: int | None, cfg: DataConfig
) -> tuple[str | None, str | None]:
    """(tier, None) for a kept problem, (None, reason) for a dropped one."""
    if source != CODEFORCES_SOURCE:
        if cfg.other_sources == "exclude":
            return None, NOT_CODEFORCES
        return cfg.other_sources, None
    if cf_rating is None or cf_rating <= 0:
        return None, CF_RATING_MISSING
    if cf_rating < min(r.min_rating for r in cfg.tiers.values()):
        return None, CF_RATING_BELOW_MIN
    for name in sorted(cfg.tiers):
        rng = cfg.tiers[name]
        if rng.min_rating <= cf_rating <= rng.max_rating:
            return name, None
    return None, CF_RATING_OUTSIDE_TIERS
