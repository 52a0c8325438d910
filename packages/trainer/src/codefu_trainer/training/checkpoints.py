"""veRL's FSDP checkpoints across the hosts of a job and across its resubmissions.

Layout veRL 0.9.1 writes under `trainer.default_local_dir` (the checkpoint root):
`global_step_N/actor/{model,optim,extra_state}_world_size_W_rank_R.pt` from each rank on
its own host, `global_step_N/actor/{fsdp_config.json,huggingface/}` from rank 0,
`global_step_N/data.pt` and `latest_checkpointed_iteration.txt` from the trainer process.

In a SageMaker job every instance mirrors its own /opt/ml/checkpoints to one S3 prefix and
gets the whole prefix back when a resubmission starts, so a restored root holds the files
of every host, including a step some host had not finished uploading. Here:

- `resume_step` counts only steps whose files are there for every rank; `prepare_resume`
  points veRL's tracker at it and drops newer, partial steps and steps beyond the
  retention, on every node (veRL keeps its retention list in memory, so steps left by a
  previous job would stay forever).
- `PruneOnEveryNode`, veRL's checkpoint callback, prunes after each save on every node
  (veRL prunes on rank 0's node only).
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

TRACKER = "latest_checkpointed_iteration.txt"
STEP_RE = re.compile(r"global_step_(\d+)")
SHARD_RE = re.compile(r"(model|optim|extra_state)_world_size_(\d+)_rank_(\d+)\.pt")
# veRL's checkpoint contents → the per-rank file each one writes.
CONTENT_FILES = {"model": "model", "optimizer": "optim", "extra": "extra_state"}
DEFAULT_CONTENTS = ("model", "optimizer", "extra")


class CheckpointError(RuntimeError):
    """Checkpoints that cannot be resumed from or exported as they are."""


# --- listing --------------------------------------------------------------------------


def list_files(root: Path) -> dict[str, int]:
    """Every file under `root` (relative POSIX path → size); empty when `root` is absent."""
    if not root.is_dir():
        return {}
    out: dict[str, int] = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            try:
                out[path.relative_to(root).as_posix()] = path.stat().st_size
            except FileNotFoundError:  # removed while listing (a concurrent prune)
                continue
    return out


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


@dataclass(frozen=True)
class ResumePlan:
    """What a root needs before veRL resumes from it."""

    step: int | None  # the newest step complete for every rank; None: start from scratch
    remove: tuple[int, ...]  # steps to delete: partial ones and those beyond the retention
    tracker_was: int | None
    found: tuple[int, ...] = ()  # every step the root held


def resume_step(
    files: Mapping[str, int] | set[str], world_size: int, contents: Sequence[str]
) -> int | None:
    """The newest step whose files are there for all `world_size` ranks."""
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


def plan_resume(
    files: Mapping[str, int] | set[str],
    tracker: int | None,
    world_size: int,
    contents: Sequence[str] = DEFAULT_CONTENTS,
    keep: int | None = None,
) -> ResumePlan:
    """Where a restored root resumes: only steps complete on all ranks count.

    Raises CheckpointError when the newest finished step was written by another number of
    ranks: veRL would look for files of this job's world size and fail on the first rank.
    """
    steps = steps_in(files)
    step = resume_step(files, world_size, contents)
    newer_other = [
        (s, sorted(world_sizes_of(files, s) - {world_size}))
        for s in sorted(steps, reverse=True)
        if step is None or s > step
    ]
    for s, sizes in newer_other:
        for size in sizes:
            if not missing_files(files, s, size, contents):
                raise CheckpointError(
                    f"Checkpoint global_step_{s} was written by {size} ranks, this job has "
                    f"{world_size} (trainer.nnodes x trainer.n_gpus_per_node). Resume it with "
                    f"{size} GPUs in all, or start over: a new run.name, or "
                    "trainer.resume_mode=disable."
                )
    remove = steps_to_remove(steps, step, keep)
    return ResumePlan(step, tuple(remove), tracker, tuple(sorted(steps)))


# --- actions on one host ----------------------------------------------------------------


def remove_steps(root: Path, steps: Iterable[int]) -> list[int]:
    """Delete `global_step_N` directories under `root`; the steps actually found."""
    removed = []
    for step in steps:
        path = root / f"global_step_{step}"
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(step)
    return removed


def prepare_resume(
    root: Path,
    world_size: int,
    contents: Sequence[str] = DEFAULT_CONTENTS,
    keep: int | None = None,
) -> ResumePlan:
    """Make `root` resume from its newest complete step (this host's copy).

    Writes veRL's tracker (removes it when no step is complete), deletes partial steps
    after that one and all but the `keep` newest. Every host of a job restored the same
    prefix, so every host reaches the same plan.
    """
    files = list_files(root) | {f"{d.name}/": 0 for d in _step_dirs(root)}  # empty steps too
    plan = plan_resume(files, tracker_step(root), world_size, contents, keep)
    remove_steps(root, plan.remove)
    tracker = root / TRACKER
    if plan.step is None:
        tracker.unlink(missing_ok=True)
    elif plan.tracker_was != plan.step:
        tmp = tracker.with_suffix(".tmp")
        tmp.write_text(str(plan.step))
        tmp.replace(tracker)
    return plan


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


def prepare_resume_everywhere(config: Any, run_on: NodeRunner | None = None) -> list[ResumePlan]:
    """`prepare_resume` on every host before veRL starts (veRL's `resume_mode=auto` only).

    veRL's trainer may run on any node and reads the tracker of its own disk; each rank
    loads its shard from its own disk, so every host's copy must agree.
    """
    if str(config.trainer.get("resume_mode", "auto")) != "auto":
        return []
    root, world, contents, keep = _actor_checkpoint(config)
    if run_on is None:
        with connected_runner() as runner:
            plans = runner(prepare_resume, root, world, contents, keep)
    else:
        plans = run_on(prepare_resume, root, world, contents, keep)
    # Hosts without any checkpoint (a judge-only node) have nothing to resume or disagree on.
    steps = {p.step for p in plans if p.found or p.tracker_was is not None}
    if len(steps) > 1:
        raise CheckpointError(
            f"The hosts' copies of {root} resume from different steps {sorted(map(str, steps))}: "
            "their restored checkpoints differ. Check the S3 checkpoint prefix, or start over "
            "with trainer.resume_mode=disable."
        )
    for plan in [p for p in plans if p.found][:1]:
        if plan.step is not None or plan.remove:
            print(
                f"codefu-train: resuming from step {plan.step} (tracker said {plan.tracker_was}); "
                f"removed partial or surplus steps {list(plan.remove)}",
                flush=True,
            )
    return plans


class PruneOnEveryNode:
    """veRL checkpoint callback (`trainer.checkpoint_callback_class`, the interface of veRL's
    CheckpointCallback): after each save, every node keeps only the
    `trainer.max_actor_ckpt_to_keep` newest steps."""

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
        if keep is None:
            return
        (self.run_on or cluster_runner())(prune, root, int(global_step), keep)
