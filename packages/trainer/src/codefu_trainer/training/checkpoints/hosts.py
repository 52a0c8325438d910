"""veRL's FSDP checkpoints across the hosts of a job and across its resubmissions.

Layout veRL 0.9.1 writes under `trainer.default_local_dir` (the checkpoint root):
`global_step_N/actor/{model,optim,extra_state}_world_size_W_rank_R.pt` from each rank on
its own host, `global_step_N/actor/{fsdp_config.json,huggingface/}` from rank 0,
`global_step_N/data.pt` and `latest_checkpointed_iteration.txt` from the trainer process.
Then our checkpoint callback has every host write `global_step_N/manifest.<host>.json`
(`manifest.py`): a step without one, or whose files differ from it, is torn.

In a SageMaker job every instance mirrors its own /opt/ml/checkpoints to one S3 prefix and
gets the whole prefix back when a resubmission starts, so a restored root holds the files
of every host, including a step some host had not finished uploading, in any order. Here:

- `survey` checks a host's steps against their manifests, newest first, down to the first
  whole one; `prepare_resume_everywhere` has every host survey, agrees on the newest step
  whole on every host, reports the torn ones (which file, what is wrong), deletes what is
  newer and beyond the retention on every node, and points veRL's tracker at that step (or
  removes it: the run starts from scratch).
- `PruneOnEveryNode`, veRL's checkpoint callback, writes the manifests after each save,
  then prunes on every node (veRL prunes on rank 0's node only), never the step just
  committed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from codefu_trainer.training.checkpoints.manifest import (
    StepCheck,
    check_step,
    list_files,
    this_host,
    write_manifest,
)

TRACKER = "latest_checkpointed_iteration.txt"
STEP_RE = re.compile(r"global_step_(\d+)")
SHARD_RE = re.compile(r"(model|optim|extra_state)_world_size_(\d+)_rank_(\d+)\.pt")
# veRL's checkpoint contents → the per-rank file each one writes.
CONTENT_FILES = {"model": "model", "optimizer": "optim", "extra": "extra_state"}
DEFAULT_CONTENTS = ("model", "optimizer", "extra")


class CheckpointError(RuntimeError):
    """Checkpoints that cannot be resumed from or exported as they are."""


# --- listing --------------------------------------------------------------------------


def steps_in(files: Iterable[str]) -> set[int]:
    """The steps that have a `global_step_N` directory among `files` (relative paths)."""
    steps = set()
    for rel in files:
        match = STEP_RE.fullmatch(rel.split("/", 1)[0])
        if match:
            steps.add(int(match.group(1)))
    return steps


def tracker_step(root: Path) -> int | None:
    """The step veRL's tracker names, or None without a (readable) tracker."""
    try:
        return int((root / TRACKER).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def rank_files(world_size: int, contents: Sequence[str]) -> list[str]:
    """The per-rank files veRL writes into `actor/` for `contents` at `world_size`."""
    names = []
    for content in contents:
        prefix = CONTENT_FILES.get(content)
        if prefix is not None:
            names += [f"{prefix}_world_size_{world_size}_rank_{r}.pt" for r in range(world_size)]
    return names


def missing_files(
    files: Mapping[str, int] | set[str], step: int, world_size: int, contents: Sequence[str]
) -> list[str]:
    """What step `step` lacks, for resuming `world_size` ranks with `contents`."""
    base = f"global_step_{step}"
    needed = [f"{base}/actor/{name}" for name in rank_files(world_size, contents)]
    needed += [f"{base}/data.pt", f"{base}/actor/fsdp_config.json"]
    return [rel for rel in needed if rel not in files]


def world_sizes_of(files: Iterable[str], step: int) -> set[int]:
    """The world sizes of the rank files step `step` holds."""
    prefix = f"global_step_{step}/actor/"
    sizes = set()
    for rel in files:
        if rel.startswith(prefix):
            match = SHARD_RE.fullmatch(rel[len(prefix) :])
            if match:
                sizes.add(int(match.group(2)))
    return sizes


# --- decisions ------------------------------------------------------------------------


def needed_in_step(world_size: int, contents: Sequence[str]) -> list[str]:
    """The files (relative to `global_step_N/`) veRL reads to resume `world_size` ranks."""
    return [f"actor/{name}" for name in rank_files(world_size, contents)] + [
        "data.pt",
        "actor/fsdp_config.json",
    ]


def torn_report(step: int, checks: Sequence[StepCheck], needed: Iterable[str]) -> list[str]:
    """What is wrong with step `step` on the hosts `checks` came from; empty when it is whole.

    Whole: every file a host holds matches a manifest there, and every file in `needed`
    (relative to the step directory) is among them.
    """
    base = f"global_step_{step}"
    verified = set().union(*(c.verified for c in checks))
    problems = [f"{base}/{p}" for c in checks for p in c.problems]
    for check in checks:
        problems += [
            f"{base}/{rel}: in no manifest (its host did not finish the save, or its "
            "manifest was lost)"
            for rel in check.unlisted
        ]
    named = {p.split(": ", 1)[0] for p in problems}
    problems += [
        f"{base}/{rel}: missing"
        for rel in needed
        if rel not in verified and f"{base}/{rel}" not in named
    ]
    return problems


@dataclass(frozen=True)
class HostSurvey:
    """One host's copy of a checkpoint root, newest step first, down to its first whole step."""

    host: str
    found: tuple[int, ...]  # every step the root holds
    tracker: int | None
    step: int | None  # the newest whole step (at most the bound asked for); None: none
    torn: tuple[tuple[int, tuple[str, ...]], ...] = ()  # steps checked and found torn


@dataclass(frozen=True)
class ResumePlan:
    """What a root needs before veRL resumes from it."""

    step: int | None  # the newest step whole on every host; None: start from scratch
    remove: tuple[int, ...]  # steps to delete: torn, newer than `step`, beyond the retention
    tracker_was: int | None
    found: tuple[int, ...] = ()  # every step the root held
    torn: tuple[tuple[int, tuple[str, ...]], ...] = ()


def resume_step(
    files: Mapping[str, int] | set[str], world_size: int, contents: Sequence[str]
) -> int | None:
    """The newest step whose files are there for all `world_size` ranks (sizes unchecked)."""
    for step in sorted(steps_in(files), reverse=True):
        if not missing_files(files, step, world_size, contents):
            return step
    return None


def steps_to_remove(steps: Iterable[int], newest: int | None, keep: int | None) -> list[int]:
    """Steps after `newest` (never finished) and all but the `keep` newest up to it."""
    steps = sorted(set(steps))
    if newest is None:
        return steps
    after = [s for s in steps if s > newest]
    upto = [s for s in steps if s <= newest]
    upto = upto[: max(len(upto) - keep, 0)] if keep is not None and keep > 0 else []
    return sorted(upto + after)


def refuse_other_world_size(
    files: Mapping[str, int] | set[str], world_size: int, contents: Sequence[str]
) -> None:
    """Raise CheckpointError when the newest finished step was written by another number of
    ranks: veRL would look for files of this job's world size and fail on the first rank."""
    step = resume_step(files, world_size, contents)
    for s in sorted(steps_in(files), reverse=True):
        if step is not None and s <= step:
            break
        for size in sorted(world_sizes_of(files, s) - {world_size}):
            if not missing_files(files, s, size, contents):
                raise CheckpointError(
                    f"Checkpoint global_step_{s} was written by {size} ranks, this job has "
                    f"{world_size} (trainer.nnodes x trainer.n_gpus_per_node). Resume it with "
                    f"{size} GPUs in all, or start over: a new run.name, or "
                    "trainer.resume_mode=disable."
                )


# --- actions on one host ----------------------------------------------------------------


def survey(
    root: Path,
    world_size: int,
    contents: Sequence[str] = DEFAULT_CONTENTS,
    at_most: int | None = None,
) -> HostSurvey:
    """Check this host's steps (at most `at_most`) against their manifests, newest first,
    until one is whole: its files are read (CRC-32) only from the newest down to that one."""
    files = list_files(root)
    refuse_other_world_size(files, world_size, contents)
    found = sorted(int(p.name.removeprefix("global_step_")) for p in _step_dirs(root))
    needed = needed_in_step(world_size, contents)
    torn: list[tuple[int, tuple[str, ...]]] = []
    for step in sorted(found, reverse=True):
        if at_most is not None and step > at_most:
            continue
        check = check_step(root / f"global_step_{step}")
        problems = torn_report(step, [check], needed)
        if not problems:
            return HostSurvey(this_host(), tuple(found), tracker_step(root), step, tuple(torn))
        torn.append((step, tuple(problems)))
    return HostSurvey(this_host(), tuple(found), tracker_step(root), None, tuple(torn))


def remove_steps(root: Path, steps: Iterable[int]) -> list[int]:
    """Delete `global_step_N` directories under `root`; the steps actually found."""
    removed = []
    for step in steps:
        path = root / f"global_step_{step}"
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(step)
    return removed


def apply_resume(root: Path, step: int | None, keep: int | None) -> list[int]:
    """Make `root` resume from `step` (None: from scratch): delete the steps after it and
    all but the `keep` newest up to it, point veRL's tracker at it. The steps removed."""
    steps = [int(p.name.removeprefix("global_step_")) for p in _step_dirs(root)]
    removed = remove_steps(root, steps_to_remove(steps, step, keep))
    tracker = root / TRACKER
    if step is None:
        tracker.unlink(missing_ok=True)
    elif (root / f"global_step_{step}").is_dir() and tracker_step(root) != step:
        tmp = tracker.with_suffix(".tmp")
        tmp.write_text(str(step))
        tmp.replace(tracker)
    return removed


def prepare_resume(
    root: Path,
    world_size: int,
    contents: Sequence[str] = DEFAULT_CONTENTS,
    keep: int | None = None,
) -> ResumePlan:
    """Make `root` resume from its newest whole step, on this host alone (`survey`, then
    `apply_resume`)."""
    found = survey(root, world_size, contents)
    removed = apply_resume(root, found.step, keep)
    return ResumePlan(found.step, tuple(removed), found.tracker, found.found, found.torn)


def commit_step(root: Path, step: int) -> str | None:
    """Write this host's manifest of step `step` (after every rank's save returned)."""
    written = write_manifest(root / f"global_step_{step}")
    return str(written) if written else None


def prune(root: Path, newest: int, keep: int | None) -> list[int]:
    """After step `newest` was saved everywhere: keep the `keep` newest steps up to it."""
    steps = [int(p.name.removeprefix("global_step_")) for p in _step_dirs(root)]
    return remove_steps(root, steps_to_remove(steps, newest, keep))


def _step_dirs(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    return [p for p in root.iterdir() if p.is_dir() and STEP_RE.fullmatch(p.name)]


# --- every node of a Ray cluster --------------------------------------------------------


class NodeRunner(Protocol):
    """Runs a function on every host that may hold checkpoint files."""

    def __call__(self, fn: Callable[..., Any], *args: Any) -> list[Any]: ...


def on_this_host(fn: Callable[..., Any], *args: Any) -> list[Any]:
    """The single-host runner: calls `fn` here."""
    return [fn(*args)]


def on_every_ray_node(fn: Callable[..., Any], *args: Any) -> list[Any]:
    """Calls `fn` on every alive node of the connected Ray cluster (a task pinned to each)."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    task = ray.remote(num_cpus=0, max_retries=0)(fn)
    refs = [
        task.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
        ).remote(*args)
        for node in ray.nodes()
        if node.get("Alive")
    ]
    return list(ray.get(refs))


def cluster_runner() -> NodeRunner:
    """Every Ray node when this process is connected to Ray, else this host alone."""
    import ray

    return on_every_ray_node if ray.is_initialized() else on_this_host


@contextlib.contextmanager
def connected_runner() -> Iterator[NodeRunner]:
    """`cluster_runner`, connecting to the cluster RAY_ADDRESS names for the duration
    (before veRL's own ray.init, which must set the job's runtime environment)."""
    import ray

    address = os.environ.get("RAY_ADDRESS")
    if ray.is_initialized() or not address:
        yield cluster_runner()
        return
    ray.init(address=address, log_to_driver=False, logging_level="WARNING")
    try:
        yield on_every_ray_node
    finally:
        ray.shutdown()


def _actor_checkpoint(config: Any) -> tuple[Path, int, list[str], int | None]:
    trainer = config.trainer
    root = Path(str(trainer.default_local_dir))
    if not root.is_absolute():
        root = Path.cwd() / root
    world = int(trainer.nnodes) * int(trainer.n_gpus_per_node)
    ckpt = config.actor_rollout_ref.actor.get("checkpoint", {}) or {}
    contents = [str(c) for c in (ckpt.get("load_contents") or DEFAULT_CONTENTS)]
    keep = trainer.get("max_actor_ckpt_to_keep")
    return root, world, contents, int(keep) if keep else None


def agree_on_step(surveys: Sequence[HostSurvey]) -> int | None:
    """The step every host resumes from: the oldest of their newest whole steps (None when
    some host holding checkpoints has no whole step). Hosts without any checkpoint (a
    judge-only node) have nothing to disagree on."""
    holding = [s for s in surveys if s.found or s.tracker is not None]
    if not holding or any(s.step is None for s in holding):
        return None
    return min(s.step for s in holding if s.step is not None)


def prepare_resume_everywhere(config: Any, run_on: NodeRunner | None = None) -> list[ResumePlan]:
    """Before veRL starts (its `resume_mode=auto` only): every host checks its copy of the
    checkpoint root against the manifests, all agree on the newest step whole on every host,
    and each deletes what is newer (torn steps among them) and beyond the retention.

    veRL's trainer may run on any node and reads the tracker of its own disk; each rank
    loads its shard from its own disk, so every host's copy must agree.
    """
    if str(config.trainer.get("resume_mode", "auto")) != "auto":
        return []
    root, world, contents, keep = _actor_checkpoint(config)
    if run_on is None:
        with connected_runner() as runner:
            return _prepare(runner, root, world, contents, keep)
    return _prepare(run_on, root, world, contents, keep)


def _prepare(
    run: NodeRunner, root: Path, world: int, contents: list[str], keep: int | None
) -> list[ResumePlan]:
    surveys: list[HostSurvey] = run(survey, root, world, contents, None)
    torn = {(i, s.host, t): problems for i, s in enumerate(surveys) for t, problems in s.torn}
    step = agree_on_step(surveys)
    while step is not None and any(s.step not in (None, step) for s in surveys if s.found):
        # A host whose newest whole step is newer checks the agreed one (and older) too.
        surveys = run(survey, root, world, contents, step)
        torn |= {(i, s.host, t): problems for i, s in enumerate(surveys) for t, problems in s.torn}
        step = agree_on_step(surveys)
    for (_, host, t), problems in sorted(torn.items(), key=lambda item: -item[0][2]):
        print(f"codefu-train: checkpoint global_step_{t} on {host} is torn:", flush=True)
        for problem in problems:
            print(f"codefu-train:   {problem}", flush=True)
    removed: list[list[int]] = run(apply_resume, root, step, keep)
    plans = [
        ResumePlan(step if s.found else None, tuple(r), s.tracker, s.found, s.torn)
        for s, r in zip(surveys, removed, strict=True)
    ]
    every_removed = sorted(set().union(*map(set, removed))) if removed else []
    if any(s.found for s in surveys):
        if step is None:
            print(
                f"codefu-train: no checkpoint step under {root} is whole on every host: "
                f"starting from scratch (removed steps {every_removed})",
                flush=True,
            )
        else:
            tracker = next((s.tracker for s in surveys if s.tracker is not None), None)
            print(
                f"codefu-train: resuming from step {step} (tracker said {tracker}), the newest "
                f"step whole on every host; removed torn, newer or surplus steps {every_removed}",
                flush=True,
            )
    if keep == 1:
        print(
            "codefu-train: trainer.max_actor_ckpt_to_keep=1 lets veRL delete the previous step "
            "before the new one's manifest is written: a crash then leaves no whole step. "
            "Keep 2 or more.",
            flush=True,
        )
    return plans


class PruneOnEveryNode:
    """veRL checkpoint callback (`trainer.checkpoint_callback_class`, the interface of veRL's
    CheckpointCallback): after each save has returned on every rank, every node writes its
    manifest of the step (which makes the step count at resume and export), then keeps only
    the `trainer.max_actor_ckpt_to_keep` newest steps."""

    def __init__(self, config: Any = None, run_on: NodeRunner | None = None) -> None:
        self.config = config
        self.run_on = run_on  # None: every node of the connected Ray cluster

    def on_save(
        self,
        trainer: Any = None,
        global_step: int = 0,
        checkpoint_dir: str = "",
        async_save: bool = False,
        **kwargs: Any,
    ) -> None:
        if async_save or self.config is None:  # an async save may still be in flight
            return
        root, _, _, keep = _actor_checkpoint(self.config)
        run = self.run_on or cluster_runner()
        run(commit_step, root, int(global_step))
        if keep is not None:
            run(prune, root, int(global_step), keep)
