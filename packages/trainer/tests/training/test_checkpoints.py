"""Checkpoint decisions across hosts and resubmissions, on files laid out as veRL writes them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from omegaconf import OmegaConf

from codefu_trainer.training.checkpoints import (
    TRACKER,
    CheckpointError,
    PruneOnEveryNode,
    list_files,
    prepare_resume,
    prepare_resume_everywhere,
    prune,
    resume_step,
    steps_to_remove,
)
from codefu_trainer.training.export import Listing, LocalHost, merge_inputs
from codefu_trainer.training.verl_config import compose_verl

from ..conftest import CONF


def _write_step(
    root: Path, step: int, ranks: range, world: int = 2, trainer_files: bool = True
) -> None:
    """The files of `ranks` for one step; rank 0 and the trainer add theirs."""
    actor = root / f"global_step_{step}" / "actor"
    actor.mkdir(parents=True, exist_ok=True)
    for r in ranks:
        for name in ("model", "optim", "extra_state"):
            (actor / f"{name}_world_size_{world}_rank_{r}.pt").write_bytes(b"x" * (r + 1))
        if r == 0:
            (actor / "fsdp_config.json").write_text(json.dumps({"world_size": world}))
            (actor / "huggingface").mkdir(exist_ok=True)
            (actor / "huggingface" / "config.json").write_text("{}")
    if trainer_files:
        (root / f"global_step_{step}" / "data.pt").write_bytes(b"d")
        (root / TRACKER).write_text(str(step))


def _two_hosts(tmp_path: Path, steps: list[int], world: int = 2) -> tuple[Path, Path]:
    """Each host's root after steps: rank 0 (and the trainer) on one, rank 1 on the other."""
    one, two = tmp_path / "host0", tmp_path / "host1"
    for step in steps:
        _write_step(one, step, range(0, 1), world)
        _write_step(two, step, range(1, world), world, trainer_files=False)
    return one, two


def _restore(hosts: tuple[Path, ...], into: Path) -> Path:
    """SageMaker's restore of one S3 prefix that every host mirrored to."""
    import shutil

    for host in hosts:
        shutil.copytree(host, into, dirs_exist_ok=True)
    return into


def test_a_step_counts_only_when_every_rank_wrote_its_files(tmp_path: Path) -> None:
    root = _restore(_two_hosts(tmp_path, [16, 32]), tmp_path / "restored")
    _write_step(root, 48, range(0, 1))  # host 1 never uploaded step 48
    files = list_files(root)
    assert resume_step(files, world_size=2, contents=["model", "optimizer", "extra"]) == 32
    # Loading the model alone needs only the model shards (load_contents=[model]).
    (root / "global_step_32" / "actor" / "optim_world_size_2_rank_1.pt").unlink()
    assert resume_step(list_files(root), 2, ["model", "optimizer", "extra"]) == 16
    assert resume_step(list_files(root), 2, ["model"]) == 32


def test_prepare_resume_points_the_tracker_at_the_newest_complete_step(tmp_path: Path) -> None:
    root = _restore(_two_hosts(tmp_path, [16, 32, 48]), tmp_path / "restored")
    _write_step(root, 64, range(0, 1))  # partial, and the tracker says 64
    plan = prepare_resume(root, world_size=2, keep=2)
    assert (plan.step, plan.remove, plan.tracker_was) == (48, (16, 64), 64)
    assert (root / TRACKER).read_text() == "48"
    assert sorted(p.name for p in root.glob("global_step_*")) == [
        "global_step_32",
        "global_step_48",
    ]


def test_no_complete_step_removes_the_tracker_and_starts_over(tmp_path: Path) -> None:
    root = tmp_path / "restored"
    _write_step(root, 16, range(0, 1))
    plan = prepare_resume(root, world_size=2, keep=3)
    assert plan.step is None and plan.remove == (16,)
    assert not (root / TRACKER).exists()


def test_a_checkpoint_of_another_world_size_is_refused_with_what_to_do(tmp_path: Path) -> None:
    root = _restore(_two_hosts(tmp_path, [16], world=4), tmp_path / "restored")
    _write_step(root, 16, range(1, 4), world=4, trainer_files=False)
    with pytest.raises(CheckpointError) as err:
        prepare_resume(root, world_size=8, keep=3)
    assert "written by 4 ranks" in str(err.value) and "resume_mode=disable" in str(err.value)
    assert (root / "global_step_16").is_dir()  # nothing removed


@given(
    steps=st.sets(st.integers(1, 400), max_size=12),
    newest=st.integers(1, 400),
    keep=st.one_of(st.none(), st.integers(1, 5)),
)
def test_removal_keeps_the_newest_steps_up_to_the_saved_one(
    steps: set[int], newest: int, keep: int | None
) -> None:
    removed = set(steps_to_remove(steps, newest, keep))
    kept = steps - removed
    assert newest not in removed
    assert all(s <= newest for s in kept)
    upto = sorted(s for s in steps if s <= newest)
    expected = upto if keep is None else upto[-keep:]
    assert sorted(kept) == expected


def _config(root: Path, keep: int | None = 2, mode: str = "auto") -> Any:
    return OmegaConf.create(
        {
            "trainer": {
                "default_local_dir": str(root),
                "nnodes": 1,
                "n_gpus_per_node": 2,
                "max_actor_ckpt_to_keep": keep,
                "resume_mode": mode,
            },
            "actor_rollout_ref": {"actor": {"checkpoint": {"load_contents": ["model"]}}},
        }
    )


def _runner_over(roots: list[Path]) -> Callable[..., list[Any]]:
    """Runs a node function once per host, on that host's root (the tests' 'cluster')."""

    def run(fn: Callable[..., Any], root: Path, *args: Any) -> list[Any]:
        del root
        return [fn(r, *args) for r in roots]

    return run


def test_every_host_prunes_after_a_save_not_only_rank_0s(tmp_path: Path) -> None:
    one, two = _two_hosts(tmp_path, [16, 32, 48, 64])
    callback = PruneOnEveryNode(config=_config(tmp_path / "unused", keep=2))
    callback.run_on = _runner_over([one, two])
    callback.on_save(trainer=None, global_step=64, checkpoint_dir=str(one / "global_step_64"))
    for host in (one, two):
        assert sorted(p.name for p in host.glob("global_step_*")) == [
            "global_step_48",
            "global_step_64",
        ]


def test_steps_of_a_previous_job_are_pruned_after_a_resume(tmp_path: Path) -> None:
    # The retention list of veRL lives in memory: a resumed job knows nothing of these.
    one, two = _two_hosts(tmp_path, [16, 32, 48])
    roots = [_restore((one, two), tmp_path / f"restored{i}") for i in range(2)]
    plans = prepare_resume_everywhere(_config(tmp_path, keep=2), run_on=_runner_over(roots))
    assert [p.step for p in plans] == [48, 48]
    callback = PruneOnEveryNode(config=_config(tmp_path, keep=2))
    callback.run_on = _runner_over(roots)
    _write_step(roots[0], 64, range(0, 1))
    _write_step(roots[1], 64, range(1, 2), trainer_files=False)
    callback.on_save(global_step=64)
    for root in roots:
        assert sorted(p.name for p in root.glob("global_step_*")) == [
            "global_step_48",
            "global_step_64",
        ]


def test_hosts_that_restored_different_checkpoints_are_refused(tmp_path: Path) -> None:
    one, two = _two_hosts(tmp_path, [16, 32])
    full = _restore((one, two), tmp_path / "full")
    stale = _restore((one, two), tmp_path / "stale")
    (stale / "global_step_32" / "actor" / "model_world_size_2_rank_1.pt").unlink()
    with pytest.raises(CheckpointError, match="different steps"):
        prepare_resume_everywhere(_config(tmp_path, keep=3), run_on=_runner_over([full, stale]))


def test_a_host_without_checkpoints_does_not_disagree(tmp_path: Path) -> None:
    one, two = _two_hosts(tmp_path, [16, 32])
    full = _restore((one, two), tmp_path / "full")
    judge = tmp_path / "judge_node"  # a node that never held a checkpoint
    plans = prepare_resume_everywhere(_config(tmp_path, keep=3), run_on=_runner_over([full, judge]))
    assert [p.step for p in plans] == [32, None]
    assert not judge.exists()


def test_resume_mode_disable_leaves_the_checkpoints_alone(tmp_path: Path) -> None:
    one, _ = _two_hosts(tmp_path, [16])
    assert prepare_resume_everywhere(_config(one, mode="disable"), run_on=_runner_over([one])) == []
    assert (one / TRACKER).read_text() == "16"


def test_the_export_finds_the_tracker_on_whichever_host_ran_the_trainer(tmp_path: Path) -> None:
    one, two = _two_hosts(tmp_path, [16, 32])
    (one / TRACKER).rename(two / TRACKER)  # veRL's trainer process ran on the second host
    listing = Listing.of([LocalHost(one), LocalHost(two, name="host1")])
    assert listing.newest_step() == 32
    inputs = merge_inputs("global_step_32/actor", listing)
    assert "global_step_32/actor/model_world_size_2_rank_1.pt" in inputs
    found = listing.where("global_step_32/actor/model_world_size_2_rank_1.pt")
    assert found is not None and found[0].name == "host1"


def test_the_export_names_the_missing_rank_and_the_hosts_searched(tmp_path: Path) -> None:
    one, _ = _two_hosts(tmp_path, [16])
    with pytest.raises(CheckpointError) as err:
        merge_inputs("global_step_16/actor", Listing.of([LocalHost(one, name="algo-1")]))
    message = str(err.value)
    assert "model_world_size_2_rank_1.pt" in message and "algo-1" in message
    assert "verl.model_merger" in message


def test_prune_without_a_retention_keeps_everything(tmp_path: Path) -> None:
    one, _ = _two_hosts(tmp_path, [16, 32])
    assert prune(one, newest=32, keep=None) == []
    assert len(list(one.glob("global_step_*"))) == 2


def test_verl_builds_the_pruning_callback_that_grpo_yaml_names() -> None:
    from verl.trainer.ppo.checkpoint_callback import build_checkpoint_callback

    config = compose_verl(CONF, [])
    callback = build_checkpoint_callback(config)
    assert isinstance(callback, PruneOnEveryNode)
    assert callback.config is config and config.trainer.max_actor_ckpt_to_keep == 3
