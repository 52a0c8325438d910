"""Difficulty tiers by Codeforces rating or difficulty label, and the rule for the rest.

Rule (configurable in `conf/data/`): a Codeforces problem with a rating goes to the tier
whose inclusive [min_rating, max_rating] contains its `cf_rating`; a rating below every
tier, or one between/above the tiers drops it with a named reason. Else a problem with a
difficulty label (LiveCodeBench's easy/medium/hard, TACO's EASY…VERY_HARD, APPS'
introductory/interview/competition) goes to the tier `data.difficulty_tiers` maps it to
(a label it does not map: `difficulty_not_in_tiers`). Else a Codeforces problem without a
rating is dropped (`cf_rating_missing`), and problems from other sources (CodeChef,
AtCoder, …: no Codeforces rating, no label) are dropped as `not_codeforces` when
`data.other_sources=exclude` (default) or all placed in the tier `data.other_sources` names.
"""

from __future__ import annotations

from codefu_data.config import DataConfig
from codefu_data.schema import CODEFORCES_SOURCE

NOT_CODEFORCES = "not_codeforces"
CF_RATING_MISSING = "cf_rating_missing"
CF_RATING_BELOW_MIN = "cf_rating_below_min"
CF_RATING_OUTSIDE_TIERS = "cf_rating_outside_tiers"
DIFFICULTY_NOT_IN_TIERS = "difficulty_not_in_tiers"


def assign_tier(
    source: int | None, cf_rating: int | None, cfg: DataConfig, label: str | None = None
) -> tuple[str | None, str | None]:
    """(tier, None) for a kept problem, (None, reason) for a dropped one."""
    rated = source == CODEFORCES_SOURCE and cf_rating is not None and cf_rating > 0
    if label is not None and not rated:
        if cfg.difficulty_tiers.get(label) in cfg.tiers:
            return cfg.difficulty_tiers[label], None
        if cfg.other_sources == "exclude":
            return None, DIFFICULTY_NOT_IN_TIERS
        return cfg.other_sources, None
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
