"""Checkpoint decisions across hosts and resubmissions, on files laid out as veRL writes them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from omegaconf import OmegaConf

from codefu_trainer.training.checkpoints.export import (
    Listing,
    LocalHost,
    export_final_model,
    merge_inputs,
)
from codefu_trainer.training.checkpoints.hosts import (
    TRACKER,
    CheckpointError,
    PruneOnEveryNode,
    prepare_resume,
    prepare_resume_everywhere,
    prune,
    resume_step,
    steps_to_remove,
)
from codefu_trainer.training.checkpoints.manifest import check_step, list_files, write_manifest
from codefu_trainer.training.verl.config import compose_verl

from ..conftest import CONF


def _write_step(
    root: Path,
    step: int,
    ranks: range,
    world: int = 2,
    *,
    trainer_files: bool = True,
    manifest: bool = True,
) -> None:
    """The files of `ranks` for one step; rank 0 and the trainer add theirs; then this
    host's manifest (what the checkpoint callback writes after every rank's save)."""
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
    if manifest:
        write_manifest(root / f"global_step_{step}", host=f"host{ranks.start}")


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


def test_hosts_whose_copies_differ_resume_from_the_newest_step_whole_on_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = _two_hosts(tmp_path, [16, 32, 48])
    full = _restore((one, two), tmp_path / "full")
    torn = _restore((one, two), tmp_path / "torn")
    (torn / "global_step_48" / "actor" / "model_world_size_2_rank_1.pt").unlink()
    plans = prepare_resume_everywhere(_config(tmp_path, keep=3), run_on=_runner_over([full, torn]))
    assert [p.step for p in plans] == [32, 32]
    for root in (full, torn):
        assert sorted(p.name for p in root.glob("global_step_*")) == [
            "global_step_16",
            "global_step_32",
        ]
        assert (root / TRACKER).read_text() == "32"
    log = capsys.readouterr().out
    assert "global_step_48/actor/model_world_size_2_rank_1.pt: missing" in log
    assert "resuming from step 32" in log


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


# --- manifests: a step counts only when its files match them -----------------------------


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _zero_tail(path: Path) -> None:  # what a crash leaves when the size was already set
    data = path.read_bytes()
    path.write_bytes(data[:-1] + b"\0")


def _drop_manifests(step_dir: Path) -> None:
    for manifest in step_dir.glob("manifest.*.json"):
        manifest.unlink()


def _garble_manifest(step_dir: Path) -> None:
    manifest = next(step_dir.glob("manifest.*.json"))
    manifest.write_text(manifest.read_text()[:20])


FAULTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "shard cut short": (
        lambda d: _cut(d / "actor" / "model_world_size_2_rank_1.pt"),
        r"actor/model_world_size_2_rank_1\.pt: cut short: 1 bytes, 2 written",
    ),
    "shard missing": (
        lambda d: (d / "actor" / "optim_world_size_2_rank_0.pt").unlink(),
        r"actor/optim_world_size_2_rank_0\.pt: missing",
    ),
    "data.pt overwritten": (
        lambda d: _zero_tail(d / "data.pt"),
        r"data\.pt: content changed: CRC-32 [0-9a-f]{8}, [0-9a-f]{8} written",
    ),
    "manifest missing": (
        _drop_manifests,
        r"actor/model_world_size_2_rank_0\.pt: in no manifest",
    ),
    "manifest unreadable": (_garble_manifest, r"manifest\.host0\.[0-9a-f]{8}\.json: unreadable"),
    "manifest half written": (
        lambda d: next(d.glob("manifest.*.json")).rename(d / "manifest.host0.json.tmp"),
        r"actor/model_world_size_2_rank_0\.pt: in no manifest",
    ),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_torn_step_is_reported_removed_and_the_newest_whole_one_resumed(
    tmp_path: Path, fault: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    for step in (16, 32):
        _write_step(root, step, range(0, 2))
    tear, expected = FAULTS[fault]
    tear(root / "global_step_32")
    plans = prepare_resume_everywhere(_config(root, keep=3), run_on=_runner_over([root]))
    assert [(p.step, p.remove) for p in plans] == [(16, (32,))]
    assert (root / TRACKER).read_text() == "16"
    assert [p.name for p in root.glob("global_step_*")] == ["global_step_16"]
    log = capsys.readouterr().out
    assert "checkpoint global_step_32 on " in log and "is torn" in log
    assert re.search(f"global_step_32/{expected}", log), log
    assert "resuming from step 16" in log


def test_no_whole_step_starts_from_scratch_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    _write_step(root, 16, range(0, 2), manifest=False)  # written before manifests existed
    plans = prepare_resume_everywhere(_config(root), run_on=_runner_over([root]))
    assert [p.step for p in plans] == [None]
    assert not (root / TRACKER).exists() and not list(root.glob("global_step_*"))
    assert "starting from scratch" in capsys.readouterr().out


def test_a_whole_step_is_not_read_past_the_newest_whole_one(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for step in (16, 32):
        _write_step(root, step, range(0, 2))
    _cut(root / "global_step_16" / "data.pt")  # older and torn: not checked, kept
    plan = prepare_resume(root, world_size=2, keep=3)
    assert (plan.step, plan.remove, plan.torn) == (32, (), ())


@given(data=st.binary(min_size=1, max_size=2048), cut=st.integers(0, 2047), flip=st.integers())
def test_any_truncation_or_changed_byte_is_found(data: bytes, cut: int, flip: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        step_dir = Path(tmp)
        target = step_dir / "actor" / "model_world_size_1_rank_0.pt"
        target.parent.mkdir()
        target.write_bytes(data)
        write_manifest(step_dir, host="h")
        assert check_step(step_dir).problems == ()
        if cut < len(data):
            target.write_bytes(data[:cut])
        else:
            at = flip % len(data)
            target.write_bytes(data[:at] + bytes([data[at] ^ 0x5A]) + data[at + 1 :])
        assert check_step(step_dir).problems != ()


def test_the_callback_commits_every_hosts_step_before_pruning(tmp_path: Path) -> None:
    one, two = _two_hosts(tmp_path, [16, 32, 48])
    _write_step(one, 64, range(0, 1), manifest=False)  # what veRL's save leaves on each host
    _write_step(two, 64, range(1, 2), trainer_files=False, manifest=False)
    callback = PruneOnEveryNode(config=_config(tmp_path / "unused", keep=2))
    callback.run_on = _runner_over([one, two])
    callback.on_save(global_step=64)
    for host in (one, two):
        assert sorted(p.name for p in host.glob("global_step_*")) == [
            "global_step_48",
            "global_step_64",
        ]
        assert len(list((host / "global_step_64").glob("manifest.*.json"))) == 1
    restored = _restore((one, two), tmp_path / "restored")
    assert prepare_resume(restored, world_size=2, keep=2).step == 64


def test_the_export_refuses_a_torn_step_with_the_report(tmp_path: Path) -> None:
    one, two = _two_hosts(tmp_path, [16])
    _cut(two / "global_step_16" / "actor" / "model_world_size_2_rank_1.pt")
    hosts = [LocalHost(one, name="algo-1"), LocalHost(two, name="algo-2")]
    with pytest.raises(CheckpointError) as err:
        export_final_model(one, tmp_path / "model", hosts=hosts)
    message = str(err.value)
    assert "global_step_16 is torn" in message and "algo-2" in message
    assert "global_step_16/actor/model_world_size_2_rank_1.pt: cut short" in message
    assert not (tmp_path / "model").exists()
