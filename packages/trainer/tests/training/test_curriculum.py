"""The pass-rate curriculum: choices as a pure function of its state, retirement, promotion,
and a kill-and-resume through its saved state."""

from __future__ import annotations

import copy
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codefu_trainer.training.curriculum import (
    SOLVED,
    UNSOLVABLE,
    Curriculum,
    CurriculumConfig,
    CurriculumState,
    ProblemStats,
    choose,
    estimate,
    tier_problem_key,
)

PROBLEMS = {
    "easy": [f"e{i}" for i in range(6)],
    "hard": [f"h{i}" for i in range(5)],
    "expert": [f"x{i}" for i in range(4)],
}
CFG = CurriculumConfig(retire_after=8, min_steps=2, window=2, promote_at=0.6)


@st.composite
def states(draw: st.DrawFn) -> CurriculumState:
    tier = draw(st.integers(0, 2))
    keys = [tier_problem_key(t, n) for t, names in PROBLEMS.items() for n in names]
    problems = {}
    for key in draw(st.lists(st.sampled_from(keys), unique=True)):
        problems[key] = ProblemStats(
            passes=draw(st.floats(0, 50)),
            fails=draw(st.floats(0, 50)),
            samples=draw(st.integers(0, 100)),
            retired=draw(st.sampled_from([None, SOLVED, UNSOLVABLE])),
        )
    return CurriculumState(
        tier=tier,
        step=draw(st.integers(0, 1000)),
        draws=draw(st.integers(0, 10**6)),
        steps_in_tier=draw(st.integers(0, 100)),
        problems=problems,
    )


@settings(max_examples=200, deadline=None)
@given(states())
def test_a_choice_is_a_pure_function_of_the_state(state: CurriculumState) -> None:
    before = copy.deepcopy(state.to_dict())
    first = choose(state, CFG, PROBLEMS)
    assert state.to_dict() == before  # choosing changes nothing
    assert choose(CurriculumState.from_dict(json.loads(json.dumps(before))), CFG, PROBLEMS) == first


@settings(max_examples=200, deadline=None)
@given(states())
def test_a_choice_is_in_the_current_tier_and_informative_when_one_is(
    state: CurriculumState,
) -> None:
    """In the current tier while it has problems not retired; else a review of the earlier
    tiers' problems not retired; informative ones first, either way."""
    tier = CFG.tiers[state.tier]
    key = choose(state, CFG, PROBLEMS)

    def not_retired(tiers: list[str]) -> list[str]:
        keys = [tier_problem_key(t, n) for t in tiers for n in PROBLEMS[t]]
        return [k for k in keys if (s := state.problems.get(k)) is None or s.retired is None]

    active = not_retired([tier]) or not_retired(list(CFG.tiers[: state.tier]))
    informative = [k for k in active if CFG.low < estimate(state.problems.get(k), CFG) < CFG.high]
    if informative:
        assert key in informative
    elif active:
        assert key in active
    else:  # nothing left to learn from anywhere: any problem of the tier
        assert key.split("/")[0] == tier and key.split("/")[1] in PROBLEMS[tier]


@settings(max_examples=50, deadline=None)
@given(states(), st.integers(0, 2**32))
def test_another_draw_count_or_seed_can_give_another_problem(
    state: CurriculumState, seed: int
) -> None:
    # Not a constant: over 40 draws of an unscored tier, more than one problem comes up.
    fresh = CurriculumState(tier=state.tier)
    cfg = CurriculumConfig(seed=seed)
    seen = set()
    for draws in range(40):
        fresh.draws = draws
        seen.add(choose(fresh, cfg, PROBLEMS))
    assert len(seen) > 1


def test_problems_always_or_never_solved_retire_and_are_not_drawn_again() -> None:
    cur = Curriculum(CurriculumConfig(retire_after=8, promote_at=1.01), PROBLEMS)
    solved, unsolvable = tier_problem_key("easy", "e0"), tier_problem_key("easy", "e1")
    retired = {SOLVED: 0, UNSOLVABLE: 0}
    for _ in range(6):
        report = cur.observe({solved: [1.0] * 8, unsolvable: [0.0] * 8})
        retired[SOLVED] += report.retired_solved
        retired[UNSOLVABLE] += report.retired_unsolvable
    assert cur.state.problems[solved].retired == SOLVED
    assert cur.state.problems[unsolvable].retired == UNSOLVABLE
    assert retired == {SOLVED: 1, UNSOLVABLE: 1}
    assert report.retired_solved_total == 1 and report.retired_unsolvable_total == 1
    drawn = {cur.draw() for _ in range(200)}
    assert solved not in drawn and unsolvable not in drawn
    assert drawn == {tier_problem_key("easy", f"e{i}") for i in range(2, 6)}


def test_a_partly_solved_problem_stays_informative() -> None:
    cur = Curriculum(CurriculumConfig(retire_after=8), PROBLEMS)
    key = tier_problem_key("easy", "e2")
    for _ in range(10):
        cur.observe({key: [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0]})
    assert cur.state.problems[key].retired is None
    assert 0.4 < estimate(cur.state.problems[key], cur.config) < 0.6


def test_promotion_when_the_tiers_pass_rate_passes_the_threshold() -> None:
    cur = Curriculum(CFG, PROBLEMS)
    low = {tier_problem_key("easy", "e0"): [1.0, 0.0, 0.0, 0.0]}
    high = {tier_problem_key("easy", "e1"): [1.0, 1.0, 1.0, 0.0]}
    assert cur.observe(low).promoted_to is None
    assert cur.observe(high).promoted_to is None  # window (0.25 + 0.75) / 2 = 0.5 < 0.6
    report = cur.observe(high)  # window 0.75 >= 0.6 after 3 >= min_steps 2
    assert report.promoted_to == "hard" and cur.tier == "hard"
    assert report.reason is not None and "0.750" in report.reason
    assert cur.state.promotions == [
        {"step": 3, "from": "easy", "to": "hard", "reason": report.reason}
    ]
    assert all(cur.draw().startswith("hard/") for _ in range(30))
    assert report.metrics()["curriculum/tier"] == 0.0
    assert cur.observe(high).metrics()["curriculum/tier"] == 1.0


def test_promotion_when_every_problem_of_the_tier_retired() -> None:
    problems = {"easy": ["a", "b"], "hard": ["c"]}
    cur = Curriculum(CurriculumConfig(tiers=("easy", "hard"), retire_after=4), problems)
    report = cur.observe({"easy/a": [1.0] * 40, "easy/b": [0.0] * 40})
    assert report.promoted_to == "hard"
    assert report.reason == "easy: every problem retired (1 solved, 1 unsolvable)"


def test_the_last_tier_is_never_left() -> None:
    cur = Curriculum(CurriculumConfig(tiers=("easy",), min_steps=1), {"easy": ["a"]})
    for _ in range(5):
        assert cur.observe({"easy/a": [1.0] * 8}).promoted_to is None
    assert cur.draw() == "easy/a"  # all retired: still draws from the tier


def test_a_last_tier_all_retired_reviews_the_earlier_tiers() -> None:
    problems = {"easy": ["a", "b"], "hard": ["c"]}
    cfg = CurriculumConfig(tiers=("easy", "hard"), retire_after=8, min_steps=1, promote_at=0.5)
    cur = Curriculum(cfg, problems)
    assert cur.observe({"easy/a": [1.0] * 40, "easy/b": [1.0, 0.0] * 4}).promoted_to == "hard"
    assert cur.observe({"hard/c": [0.0] * 40}).retired_unsolvable == 1
    # easy/a retired as solved (40 of 40); easy/b, half solved, is the one left to learn from.
    assert cur.state.problems["easy/a"].retired == SOLVED
    assert [cur.draw() for _ in range(5)] == ["easy/b"] * 5
    report = cur.observe({"easy/b": [1.0, 0.0] * 20})
    assert report.review_draws == 5 and report.metrics()["curriculum/review_draws"] == 5.0
    assert report.tier == "hard"  # a review does not move the run back


def _simulate(cur: Curriculum, steps: int, rng: random.Random) -> list[tuple[str, ...]]:
    """Draw 4 problems a step; score 8 samples each with a per-problem skill."""
    out = []
    for _ in range(steps):
        keys = tuple(cur.draw() for _ in range(4))
        scores: dict[str, list[float]] = {}
        for key in keys:
            skill = (sum(map(ord, key)) % 10) / 10
            scores.setdefault(key, []).extend(float(rng.random() < skill) for _ in range(8))
        cur.observe(scores)
        out.append(keys)
    return out


@pytest.mark.parametrize("kill_at", [1, 7, 13])
def test_kill_and_resume_continues_with_the_same_state(kill_at: int) -> None:
    config = CurriculumConfig(retire_after=8, min_steps=3, window=3, promote_at=0.35, seed=3)
    whole = Curriculum(config, PROBLEMS)
    expected = _simulate(whole, 20, random.Random(0))

    first = Curriculum(config, PROBLEMS)
    rng = random.Random(0)
    got = _simulate(first, kill_at, rng)
    saved = json.loads(json.dumps(first.state_dict()))  # what a checkpoint holds
    del first
    resumed = Curriculum(config, PROBLEMS)
    resumed.load_state_dict(saved)
    got += _simulate(resumed, 20 - kill_at, rng)
    assert got == expected
    assert resumed.state.to_dict() == whole.state.to_dict()
    assert whole.state.promotions  # the run went somewhere: it promoted at least once


def test_a_checkpoint_of_other_tiers_is_refused() -> None:
    saved = Curriculum(CFG, PROBLEMS).state_dict()
    other = Curriculum(CurriculumConfig(tiers=("easy", "hard")), PROBLEMS)
    with pytest.raises(ValueError, match="resume with the same tiers"):
        other.load_state_dict(saved)


def test_config_errors_name_the_key() -> None:
    with pytest.raises(ValueError, match="unknown key"):
        CurriculumConfig.from_mapping({"tier": ["easy"]})
    with pytest.raises(ValueError, match="low < high"):
        CurriculumConfig(low=0.9, high=0.1)
    with pytest.raises(ValueError, match="no problems in tier"):
        Curriculum(CurriculumConfig(), {"easy": ["a"]})
    assert CurriculumConfig.from_mapping({"tiers": ["easy", "hard"]}).tiers == ("easy", "hard")
