"""A pass-rate curriculum over the prepared tiers (Easy → Hard → Expert).

`Curriculum` keeps, per problem, a pass-rate estimate from the judge's scores of each step
(a Beta posterior whose counts decay, so old scores of an older policy fade), draws the next
problem among those of the current tier whose estimate is informative (neither ~0 nor ~1:
a group of samples that all pass or all fail has zero GRPO advantage), retires problems
that are reliably solved or unsolvable, and promotes the run to the next tier when the
tier's recent pass rate reaches a threshold (or no problem of it is left to learn from).

Every choice is a pure function of `CurriculumState` (`choose`), which is plain data:
`state_dict()` / `load_state_dict()` round-trip it through JSON-able dicts, so it is saved
with each checkpoint and restored on resume.

veRL 0.9.1 reaches it through two extension points (`codefu_trainer.training.verl.curriculum`):
the RL dataset class (`data.custom_cls`) draws the problems, and the V1 replay buffer
(`trainer.v1.sampler.custom_sampler`) hands it the judge's scores of every finished group.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

SOLVED = "solved"
UNSOLVABLE = "unsolvable"


@dataclass(frozen=True)
class CurriculumConfig:
    """Settings of the curriculum (veRL config: data.curriculum; rehearsal: the same keys)."""

    tiers: tuple[str, ...] = ("easy", "hard", "expert")
    # A sample passes when the judge's score is at least this (1.0: every test accepted).
    pass_score: float = 1.0
    # Beta prior of a problem never scored: mean prior_pass / (prior_pass + prior_fail).
    prior_pass: float = 1.0
    prior_fail: float = 1.0
    # Each step, earlier counts are multiplied by this (1.0: never forget).
    decay: float = 0.9
    # Informative band: problems whose estimate is inside (low, high) are drawn first.
    low: float = 0.05
    high: float = 0.95
    # Retire a problem after at least this many scored samples with its estimate outside
    # [retire_low, retire_high]: solved (never drawn again) or unsolvable (likewise).
    retire_after: int = 16
    retire_low: float = 0.05
    retire_high: float = 0.95
    # Promote when the tier's pass rate over the last `window` steps reaches `promote_at`,
    # after at least `min_steps` steps in the tier.
    promote_at: float = 0.5
    window: int = 4
    min_steps: int = 4
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.tiers:
            raise ValueError(
                "curriculum.tiers is empty: list the tiers to train on, e.g. [easy, hard]."
            )
        if len(set(self.tiers)) != len(self.tiers):
            raise ValueError(f"curriculum.tiers={list(self.tiers)} names a tier twice.")
        if not 0 <= self.low < self.high <= 1:
            raise ValueError("curriculum: need 0 <= low < high <= 1.")
        if not 0 <= self.retire_low <= self.retire_high <= 1:
            raise ValueError("curriculum: need 0 <= retire_low <= retire_high <= 1.")
        if self.prior_pass <= 0 or self.prior_fail <= 0:
            raise ValueError("curriculum.prior_pass and prior_fail must be > 0.")
        if not 0 < self.decay <= 1:
            raise ValueError("curriculum.decay must be in (0, 1].")
        if self.window < 1 or self.min_steps < 1 or self.retire_after < 1:
            raise ValueError("curriculum.window, min_steps and retire_after must be >= 1.")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> CurriculumConfig:
        """From a config mapping; an unknown key is an error naming the valid ones."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(
                f"curriculum: unknown key(s) {unknown}; valid keys: {', '.join(sorted(known))}."
            )
        kwargs = dict(values)
        if kwargs.get("seed") is None:
            kwargs.pop("seed", None)  # data.seed null: the default seed
        if "tiers" in kwargs:
            kwargs["tiers"] = tuple(str(t) for t in kwargs["tiers"])
        return cls(**kwargs)


@dataclass
class ProblemStats:
    """Decayed pass/fail counts of one problem, its scored samples, and whether it retired."""

    passes: float = 0.0
    fails: float = 0.0
    samples: int = 0
    retired: str | None = None  # SOLVED, UNSOLVABLE or None


@dataclass
class CurriculumState:
    """Everything a choice depends on (plain data, saved with each checkpoint)."""

    tier: int = 0
    step: int = 0
    draws: int = 0
    steps_in_tier: int = 0
    problems: dict[str, ProblemStats] = field(default_factory=dict)
    # [passes, samples] of the current tier, one entry per step (the last `window` kept).
    recent: list[list[int]] = field(default_factory=list)
    # One entry per promotion: step, from, to, reason.
    promotions: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CurriculumState:
        problems = {k: ProblemStats(**v) for k, v in data.get("problems", {}).items()}
        return cls(
            tier=int(data["tier"]),
            step=int(data["step"]),
            draws=int(data["draws"]),
            steps_in_tier=int(data["steps_in_tier"]),
            problems=problems,
            recent=[list(map(int, r)) for r in data.get("recent", [])],
            promotions=[dict(p) for p in data.get("promotions", [])],
        )


@dataclass(frozen=True)
class StepReport:
    """What one step's scores did to the curriculum (the per-step metrics)."""

    tier: str
    tier_index: int
    pass_rate: float  # this step's samples
    window_pass_rate: float  # the tier's last `window` steps
    retired_solved: int  # this step
    retired_unsolvable: int
    retired_solved_total: int  # in the current tier so far
    retired_unsolvable_total: int
    informative: int  # problems of the current tier now inside the informative band
    sampled_difficulty: float  # mean 1 - estimate of the problems drawn since the last step
    review_draws: int  # of those draws, how many came from an earlier tier (a review)
    promoted_to: str | None
    reason: str | None

    def metrics(self, prefix: str = "curriculum/") -> dict[str, float]:
        return {
            f"{prefix}tier": float(self.tier_index),
            f"{prefix}pass_rate": self.pass_rate,
            f"{prefix}window_pass_rate": self.window_pass_rate,
            f"{prefix}retired_solved": float(self.retired_solved),
            f"{prefix}retired_unsolvable": float(self.retired_unsolvable),
            f"{prefix}retired_solved_total": float(self.retired_solved_total),
            f"{prefix}retired_unsolvable_total": float(self.retired_unsolvable_total),
            f"{prefix}informative_problems": float(self.informative),
            f"{prefix}sampled_difficulty": self.sampled_difficulty,
            f"{prefix}review_draws": float(self.review_draws),
            f"{prefix}promoted": float(self.promoted_to is not None),
        }


def tier_problem_key(tier: str, name: str) -> str:
    """A problem's identity in the curriculum, `<tier>/<name>` (the reward's
    `service.problem_key` is another thing: a ground truth's cache key)."""
    return f"{tier}/{name}"


def estimate(stats: ProblemStats | None, config: CurriculumConfig) -> float:
    """Posterior mean pass rate of a problem."""
    passes, fails = (stats.passes, stats.fails) if stats else (0.0, 0.0)
    return (passes + config.prior_pass) / (passes + fails + config.prior_pass + config.prior_fail)


def _rng(config: CurriculumConfig, state: CurriculumState) -> random.Random:
    digest = hashlib.sha256(f"{config.seed}:{state.tier}:{state.draws}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def choose(
    state: CurriculumState, config: CurriculumConfig, problems: Mapping[str, Sequence[str]]
) -> str:
    """The next tier problem key: a pure function of (state, config, problems).

    Among the current tier's problems that are not retired, those inside the informative
    band are drawn with weight p(1-p) (the variance of a pass, so the expected spread of a
    group's scores); when none is informative, any problem not retired. When every problem
    of the tier retired (only the last tier stays so: the others promote), the same rule
    over the earlier tiers' problems not retired (a review); when none is left anywhere,
    any problem of the tier.
    """
    tier = config.tiers[state.tier]
    names = list(problems.get(tier, ()))
    if not names:
        raise ValueError(f"curriculum: tier {tier!r} has no problems; prepare it or drop it.")
    keys = [tier_problem_key(tier, n) for n in names]
    active = [k for k in keys if not _retired(state, k)]
    if not active:
        earlier = [tier_problem_key(t, n) for t in config.tiers[: state.tier] for n in problems[t]]
        active = [k for k in earlier if not _retired(state, k)]
    rates = {k: estimate(state.problems.get(k), config) for k in active}
    informative = [k for k in active if config.low < rates[k] < config.high]
    rng = _rng(config, state)
    if informative:
        weights = [rates[k] * (1 - rates[k]) for k in informative]
        return rng.choices(informative, weights=weights, k=1)[0]
    return rng.choice(active or keys)


def _retired(state: CurriculumState, key: str) -> bool:
    stats = state.problems.get(key)
    return stats is not None and stats.retired is not None


class Curriculum:
    """The curriculum of one run: problems per tier, config, and its mutable state."""

    def __init__(
        self,
        config: CurriculumConfig,
        problems: Mapping[str, Sequence[str]],
        state: CurriculumState | None = None,
    ) -> None:
        missing = [t for t in config.tiers if not problems.get(t)]
        if missing:
            raise ValueError(
                f"curriculum: no problems in tier(s) {missing}; run `nox -s prepare` for them or "
                "remove them from curriculum.tiers."
            )
        self.config = config
        self.problems = {t: list(problems[t]) for t in config.tiers}
        self.state = state or CurriculumState()
        self._drawn: list[float] = []  # difficulties drawn this step (metrics, not state)
        self._reviewed = 0  # draws from an earlier tier this step (metrics, not state)

    @property
    def tier(self) -> str:
        return self.config.tiers[self.state.tier]

    def draw(self) -> str:
        """The next tier problem key; advances the draw counter."""
        key = choose(self.state, self.config, self.problems)
        self._drawn.append(self.difficulty(key))
        self._reviewed += not key.startswith(f"{self.tier}/")
        self.state.draws += 1
        return key

    def difficulty(self, key: str) -> float:
        """1 - the problem's pass-rate estimate (the metric `sampled difficulty`)."""
        return 1.0 - estimate(self.state.problems.get(key), self.config)

    def observe(self, scores: Mapping[str, Sequence[float]]) -> StepReport:
        """One step's judge scores per tier problem key: update, retire, maybe promote."""
        cfg, st = self.config, self.state
        tier = self.tier
        drawn, self._drawn = self._drawn, []
        reviewed, self._reviewed = self._reviewed, 0
        for stats in st.problems.values():
            stats.passes *= cfg.decay
            stats.fails *= cfg.decay
        step_passes = step_samples = tier_passes = tier_samples = 0
        retired = {SOLVED: 0, UNSOLVABLE: 0}
        for key, values in scores.items():
            passes = sum(1 for v in values if v >= cfg.pass_score)
            stats = st.problems.setdefault(key, ProblemStats())
            stats.passes += passes
            stats.fails += len(values) - passes
            stats.samples += len(values)
            step_passes += passes
            step_samples += len(values)
            if key.startswith(f"{tier}/"):
                tier_passes += passes
                tier_samples += len(values)
            if stats.retired is None and stats.samples >= cfg.retire_after:
                p = estimate(stats, cfg)
                if p >= cfg.retire_high:
                    stats.retired = SOLVED
                elif p <= cfg.retire_low:
                    stats.retired = UNSOLVABLE
                if stats.retired is not None and key.startswith(f"{tier}/"):
                    retired[stats.retired] += 1
        st.step += 1
        st.steps_in_tier += 1
        st.recent = [*st.recent, [tier_passes, tier_samples]][-cfg.window :]
        window_passes = sum(r[0] for r in st.recent)
        window_samples = sum(r[1] for r in st.recent)
        window_rate = window_passes / window_samples if window_samples else 0.0
        keys = [tier_problem_key(tier, n) for n in self.problems[tier]]
        active = [k for k in keys if not _retired(st, k)]
        informative = sum(
            1 for k in active if cfg.low < estimate(st.problems.get(k), cfg) < cfg.high
        )
        totals = {
            status: sum(1 for k in keys if (s := st.problems.get(k)) and s.retired == status)
            for status in (SOLVED, UNSOLVABLE)
        }
        promoted_to, reason = None, None
        if st.tier + 1 < len(cfg.tiers):
            if st.steps_in_tier >= cfg.min_steps and window_rate >= cfg.promote_at:
                reason = (
                    f"{tier}: pass rate {window_rate:.3f} over the last {len(st.recent)} steps "
                    f">= {cfg.promote_at}"
                )
            elif not active:
                reason = f"{tier}: every problem retired ({totals[SOLVED]} solved, " + (
                    f"{totals[UNSOLVABLE]} unsolvable)"
                )
        if reason is not None:
            promoted_to = cfg.tiers[st.tier + 1]
            st.promotions.append(
                {"step": st.step, "from": tier, "to": promoted_to, "reason": reason}
            )
            st.tier += 1
            st.steps_in_tier = 0
            st.recent = []
        return StepReport(
            tier=tier,
            tier_index=cfg.tiers.index(tier),
            pass_rate=step_passes / step_samples if step_samples else 0.0,
            window_pass_rate=window_rate,
            retired_solved=retired[SOLVED],
            retired_unsolvable=retired[UNSOLVABLE],
            retired_solved_total=totals[SOLVED],
            retired_unsolvable_total=totals[UNSOLVABLE],
            informative=informative,
            sampled_difficulty=sum(drawn) / len(drawn) if drawn else 0.0,
            review_draws=reviewed,
            promoted_to=promoted_to,
            reason=reason,
        )

    def state_dict(self) -> dict[str, Any]:
        return {"config": asdict(self.config), "state": self.state.to_dict()}

    def load_state_dict(self, data: Mapping[str, Any]) -> None:
        """Restore a saved state; the tiers must be the ones it was saved with."""
        saved = tuple(data["config"]["tiers"])
        if saved != self.config.tiers:
            raise ValueError(
                f"curriculum: the checkpoint's tiers {list(saved)} differ from "
                f"curriculum.tiers={list(self.config.tiers)}; resume with the same tiers."
            )
        self.state = CurriculumState.from_dict(data["state"])
