"""Every use of a third-party private name, anchored to the library line it relies on.

Where veRL, TRL or Ray offer no public extension point, our code overrides or reads a
private name (a method a subclass replaces, a private function, a key format). Each such
use is an `Override` here, or a `Patch` (an `Override` applied as veRL imports a module) in
`verl/cpu/patches.py`: its anchors name the library file and line and the text expected
there, checked against the installed library by `check` (run by the tests: a library
upgrade that moves or changes such a line fails there, naming what to revisit). One type,
one check, for both lists: `OVERRIDES` (used by our subclasses and helpers, on every
machine) and `verl.cpu.patches.PATCHES` (veRL on CPU only).

Importing this module imports no library: it reads their sources as text.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["OVERRIDES", "Anchor", "Override", "check", "library_root"]


@dataclass(frozen=True)
class Anchor:
    """Text expected at a line of a library's file (`path` relative to its package)."""

    path: str
    line: int
    text: str
    library: str = "verl"

    def where(self) -> str:
        return f"{self.library}/{self.path}:{self.line}"


@dataclass(frozen=True)
class Override:
    """One use of a library's private name: what, where we rely on it, and why."""

    name: str
    anchors: tuple[Anchor, ...]
    why: str


def library_root(library: str) -> Path:
    """The installed package directory of `library` (found without importing it)."""
    spec = importlib.util.find_spec(library)
    if spec is None or spec.origin is None:
        raise ImportError(f"{library} is not installed: pip install 'codefu-trainer[train]'.")
    return Path(spec.origin).parent


def check(overrides: Iterable[Override]) -> list[str]:
    """Each anchor whose library line no longer holds the expected text (empty: all hold)."""
    wrong: list[str] = []
    for override in overrides:
        for anchor in override.anchors:
            lines = (library_root(anchor.library) / anchor.path).read_text().splitlines()
            found = lines[anchor.line - 1].strip() if anchor.line <= len(lines) else "<no line>"
            if anchor.text not in found:
                wrong.append(
                    f"{override.name}: {anchor.where()} holds {found!r}, expected {anchor.text!r}"
                )
    return wrong


_GRPO = "trainer/grpo_trainer.py"
_REPLAY = "trainer/ppo/v1/replay_buffer.py"
_TRAINER_BASE = "trainer/ppo/v1/trainer_base.py"

OVERRIDES: tuple[Override, ...] = (
    Override(
        name="TRL GRPOTrainer._generate_and_score_completions (rehearsal/loop.py)",
        anchors=(
            Anchor(_GRPO, 2343, "def _generate_and_score_completions(", "trl"),
            Anchor(
                _GRPO,
                1603,
                "inputs = self._generate_and_score_completions(generation_batch)",
                "trl",
            ),
        ),
        why="RehearsalGRPOTrainer measures the zero-variance groups of each generation batch "
        "and, with dynamic sampling, generates again and keeps the groups whose scores "
        "disagree: TRL builds a generation batch only in this private method.",
    ),
    Override(
        name="TRL GRPOTrainer._get_per_token_logps_and_entropies (rehearsal/loop.py)",
        anchors=(
            Anchor(_GRPO, 1448, "def _get_per_token_logps_and_entropies(", "trl"),
            Anchor(_GRPO, 1561, "return logps, entropies, aux_loss", "trl"),
        ),
        why="RehearsalGRPOTrainer keeps the current policy's log-probs (the first item) of "
        "the loss's forward pass to measure veRL's actor/ppo_kl.",
    ),
    Override(
        name="TRL GRPOTrainer._compute_loss (rehearsal/loop.py)",
        anchors=(
            Anchor(_GRPO, 3109, "def _compute_loss(self, model, inputs):", "trl"),
            Anchor(
                _GRPO,
                3119,
                "per_token_logps, entropies, aux_loss = self._get_per_token_logps_and_entropies(",
                "trl",
            ),
            Anchor(_GRPO, 3154, 'old_per_token_logps = inputs.get("old_per_token_logps")', "trl"),
        ),
        why="actor/ppo_kl compares the old policy's log-probs (inputs' old_per_token_logps, "
        "None when they equal the current ones) with the first log-probs _compute_loss "
        "computes, the current policy's.",
    ),
    Override(
        name="veRL ReplayBuffer._sync_metadata_from_transfer_queue (verl/curriculum.py)",
        anchors=(
            Anchor(_REPLAY, 201, "def _sync_metadata_from_transfer_queue(self):"),
            Anchor(_REPLAY, 451, "self._sync_metadata_from_transfer_queue()"),
            Anchor(_REPLAY, 184, "self.partitions: dict[str, dict[str, dict]] = defaultdict(dict)"),
            Anchor(_REPLAY, 187, "self.finished_keys: dict[str, set] = defaultdict(set)"),
        ),
        why="CurriculumReplayBuffer reads the judge's scores of every group finished since "
        "the last poll, before veRL filters any: the only place veRL refreshes which groups "
        "finished (finished_keys) among the partition's trajectories (partitions).",
    ),
    Override(
        name="veRL's TransferQueue key format {uid}_{session_id}_{index} (verl/curriculum.py)",
        anchors=(
            Anchor(_REPLAY, 70, "The key format is `{uid}_{session_id}_{index}`, where:"),
            Anchor(
                _REPLAY,
                246,
                'trajectory_keys = {key for key in self.partitions[partition_id] if key.split("_")'
                "[0] in uids}",
            ),
        ),
        why="a trajectory's group (its prompt's uid) is the key's text before the first `_`, "
        "as veRL's replay buffer reads it (verl.curriculum.group_uid).",
    ),
    Override(
        name="veRL's MLflow parameters, verl.utils.tracking._compute_mlflow_params_from_objects "
        "(verl/trainer.py)",
        anchors=(
            Anchor("utils/tracking.py", 628, "def _compute_mlflow_params_from_objects(params)"),
            Anchor(
                "utils/tracking.py",
                119,
                "mlflow.log_params(_compute_mlflow_params_from_objects(config))",
            ),
        ),
        why="a resume whose config changed a value must log into an MLflow run that takes "
        "the parameters veRL's Tracking logs: exactly those this private function computes.",
    ),
    Override(
        name="veRL's trainer mode, trainer.v1.trainer_mode (verl/trainer.py)",
        anchors=(
            Anchor(
                "trainer/main_ppo.py",
                141,
                "trainer_cls = get_trainer_cls(config.trainer.v1.trainer_mode)",
            ),
            Anchor(_TRAINER_BASE, 129, "self.trainer_mode = self.config.trainer.v1.trainer_mode"),
            Anchor(
                _TRAINER_BASE,
                153,
                'sampler_cls = ReplayBuffer if self.trainer_mode == "sync" else ReplayBufferAsync',
            ),
        ),
        why="the task runner picks the trainer class by trainer.v1.trainer_mode (our "
        "codefu_<mode>), and veRL's trainer reads the same key for its own mode: "
        "CodeFuJudgeTrainer sets it back to veRL's mode before veRL's __init__ reads it.",
    ),
    Override(
        name="veRL PPOTrainer._compute_old_log_prob, _compute_ref_log_prob, _update_actor "
        "(verl/trainer.py, --smoke)",
        anchors=(
            Anchor(_TRAINER_BASE, 1634, "def _compute_old_log_prob(self, batch: KVBatchMeta"),
            Anchor(_TRAINER_BASE, 586, "batch = self._compute_old_log_prob(batch, metrics="),
            Anchor(_TRAINER_BASE, 1695, "def _compute_ref_log_prob(self, batch: KVBatchMeta"),
            Anchor(_TRAINER_BASE, 591, "batch = self._compute_ref_log_prob(batch, metrics="),
            Anchor(_TRAINER_BASE, 1827, "def _update_actor(self, batch: KVBatchMeta"),
            Anchor(_TRAINER_BASE, 610, "batch = self._update_actor(batch, metrics=metrics)"),
        ),
        why="the smoke's table needs each phase's time and peak memory; veRL's step runs the "
        "three phases only through these private methods (its timers keep durations only).",
    ),
    Override(
        name="Ray's actor class under ray.remote, __ray_actor_class__ (verl/trainer.py)",
        anchors=(
            Anchor(
                "actor.py", 2835, "__ray_actor_class__ = cls  # The original actor class", "ray"
            ),
        ),
        why="judge_task_runner subclasses veRL's TaskRunnerV1, which veRL exports already "
        "wrapped by @ray.remote: the class itself is only reachable there.",
    ),
)
