"""The curriculum (codefu_trainer.training.curriculum) inside veRL 0.9.1's V1 trainer.

Two extension points, no fork (conf/verl/curriculum/tiers.yaml sets both):

- `CurriculumDataset` (`data.custom_cls`): the training dataset. Its items are drawn by the
  curriculum, not by veRL's sampler's index, from the prepared tiers next to
  `data.train_files` (<out_dir>/<tier>/train.parquet); each item carries its tier problem key in
  `extra_info.curriculum_problem`. It is `Stateful`, so veRL's StatefulDataLoader saves the
  curriculum state in every checkpoint's data.pt and restores it on resume. The validation
  dataset (any other files) is veRL's RLHFDataset unchanged.
- `CurriculumReplayBuffer` (`trainer.v1.sampler.custom_sampler`): veRL's sync ReplayBuffer
  (its dynamic sampling included, from `sampler_kwargs`), which also reads the judge's score
  of every finished group, before any is filtered, and at the end of each sample hands the
  step's scores to the curriculum and adds its metrics (curriculum/*) to the step's.

Both live in the trainer's driver process (the dataset needs data.dataloader_num_workers=0
so that its draws see the scores), and find each other through `active_curriculum()`.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from torch.utils.data import Dataset

from codefu_trainer.training.curriculum import Curriculum, CurriculumConfig, tier_problem_key

PROBLEM_FIELD = "curriculum_problem"  # extra_info key of the problem an item was drawn as

_ACTIVE: dict[str, Curriculum] = {}  # "train": the training dataset's curriculum
_LOCK = threading.Lock()


def active_curriculum() -> Curriculum | None:
    """The curriculum of the training dataset built in this process, if any."""
    return _ACTIVE.get("train")


def _set_active(curriculum: Curriculum) -> None:
    with _LOCK:
        _ACTIVE["train"] = curriculum


def tier_files(train_file: str | Path, tiers: Sequence[str]) -> dict[str, Path]:
    """<out_dir>/<tier>/train.parquet of each tier, beside the configured train file's tier."""
    root = Path(train_file).parent.parent
    return {tier: root / tier / Path(train_file).name for tier in tiers}


def _problem_names(dataset: Any) -> list[str]:
    """One unique name per row: the ground truth's problem name (row index when absent)."""
    names: list[str] = []
    seen: set[str] = set()
    frame = dataset.dataframe
    column = (
        frame.select_columns(["reward_model"]) if "reward_model" in frame.column_names else None
    )
    for i in range(len(frame)):
        name = ""
        if column is not None:
            truth = (column[i]["reward_model"] or {}).get("ground_truth") or {}
            name = str(truth.get("name") or "") if isinstance(truth, Mapping) else ""
        name = name or f"row{i}"
        if name in seen:
            name = f"{name}#{i}"
        seen.add(name)
        names.append(name)
    return names


class CurriculumDataset(Dataset):
    """veRL's RL dataset (`data.custom_cls`): the training items follow the curriculum."""

    def __init__(
        self,
        data_files: str | Sequence[str],
        tokenizer: Any,
        config: Any,
        processor: Any = None,
        max_samples: int = -1,
    ) -> None:
        from verl.utils.dataset.rl_dataset import RLHFDataset

        files = [data_files] if isinstance(data_files, str) else [str(f) for f in data_files]
        train_files = [str(f) for f in config.get("train_files") or []]
        settings = config.get("curriculum")
        self.curriculum: Curriculum | None = None
        if files != train_files or settings is None:
            # Validation (or no curriculum configured): veRL's dataset as it is.
            self._plain: Any = RLHFDataset(files, tokenizer, config, processor, max_samples)
            return
        if len(files) != 1:
            raise ValueError(
                f"data.curriculum reads the prepared tiers next to one train file; "
                f"data.train_files has {len(files)}: {files}."
            )
        if int(config.get("dataloader_num_workers", 0)) != 0:
            raise ValueError(
                "data.curriculum draws problems in the trainer's process, where the judge's "
                "scores arrive: set data.dataloader_num_workers=0."
            )
        cfg = CurriculumConfig.from_mapping(dict(settings))
        paths = tier_files(files[0], cfg.tiers)
        missing = [str(p) for p in paths.values() if not p.is_file()]
        if missing:
            raise FileNotFoundError(
                f"data.curriculum: no prepared tier file(s) {missing}; run `nox -s prepare` "
                "(it writes every tier) or list only the prepared tiers in curriculum.tiers."
            )
        self._plain = None
        self.tiers = {
            tier: RLHFDataset([str(path)], tokenizer, config, processor, max_samples)
            for tier, path in paths.items()
        }
        names = {tier: _problem_names(ds) for tier, ds in self.tiers.items()}
        self._rows = {
            tier_problem_key(tier, name): (tier, i)
            for tier, tier_names in names.items()
            for i, name in enumerate(tier_names)
        }
        self.curriculum = Curriculum(cfg, names)
        _set_active(self.curriculum)

    def __len__(self) -> int:
        if self._plain is not None:
            return len(self._plain)
        return sum(len(ds) for ds in self.tiers.values())

    def __getitem__(self, index: int) -> dict[str, Any]:
        """veRL's sampler's index is ignored for training items: the curriculum draws."""
        if self._plain is not None:
            return dict(self._plain[index])
        assert self.curriculum is not None
        with _LOCK:
            key = self.curriculum.draw()
        tier, row = self._rows[key]
        item = dict(self.tiers[tier][row])
        item["extra_info"] = {**(item.get("extra_info") or {}), PROBLEM_FIELD: key}
        return item

    # torchdata's Stateful protocol: StatefulDataLoader saves these in veRL's data.pt.
    def state_dict(self) -> dict[str, Any]:
        return {} if self.curriculum is None else {"curriculum": self.curriculum.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if self.curriculum is not None and state.get("curriculum"):
            with _LOCK:
                self.curriculum.load_state_dict(state["curriculum"])


def group_uid(key: str) -> str:
    """The group (its prompt's uid) of a TransferQueue trajectory key: veRL's key format is
    `{uid}_{session_id}_{index}` (anchors.py: "veRL's TransferQueue key format")."""
    return key.split("_", maxsplit=1)[0]


def _metric(value: Any, key: str) -> float | None:
    """`key` of a trajectory's reward_extra_info, as veRL's replay buffer reads it."""
    extra = getattr(value, "data", value)
    info = extra.get("reward_extra_info", {}) if isinstance(extra, Mapping) else {}
    return float(info[key]) if key in info else None


def _replay_buffer_base() -> type:
    from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer

    return ReplayBuffer


class CurriculumReplayBuffer(_replay_buffer_base()):  # type: ignore[misc]
    """veRL's sync ReplayBuffer that also feeds the judge's scores to the curriculum.

    veRL gives a custom sampler no filter settings; `sampler_kwargs` carries them
    (conf/verl/curriculum/tiers.yaml interpolates them from algorithm.filter_groups):
    filter_groups_enable, filter_groups_metric, max_inflight_gen_batches, train_batch_size,
    and score_key (the reward_extra_info key the curriculum counts, default `score`).
    """

    def __init__(
        self,
        *,
        trainer_mode: str,
        trainer_config: Any,
        max_off_policy_threshold: int | None,
        max_off_policy_strategy: str,
        sampler_kwargs: Mapping[str, Any] | None,
        refill_fn: Any = None,
        **kwargs: Any,
    ) -> None:
        if trainer_mode != "sync":
            raise ValueError(
                "the curriculum's replay buffer runs veRL's sync trainer: set "
                "trainer.v1.trainer_mode=sync."
            )
        options = dict(sampler_kwargs or {})
        metric = (
            options.get("filter_groups_metric") if options.get("filter_groups_enable") else None
        )
        train_batch_size = int(options.get("train_batch_size") or 0)
        if train_batch_size < 1:
            raise ValueError(
                "trainer.v1.sampler.sampler_kwargs.train_batch_size must be set "
                "(conf/verl/curriculum/tiers.yaml: ${data.train_batch_size})."
            )
        super().__init__(
            trainer_mode=trainer_mode,
            trainer_config=trainer_config,
            max_off_policy_threshold=max_off_policy_threshold,
            max_off_policy_strategy=max_off_policy_strategy,
            sampler_kwargs=sampler_kwargs,
            refill_fn=refill_fn,
            filter_groups_metric=str(metric) if metric else None,
            train_batch_size=train_batch_size,
            # veRL's trainer fetches one prompt at a time whenever groups are filtered.
            gen_batch_size=1 if metric else train_batch_size,
            max_inflight_gen_batches=int(options.get("max_inflight_gen_batches") or 1),
        )
        self.score_key = str(options.get("score_key") or "score")
        self._observed: set[str] = set()
        self._step_scores: dict[str, list[float]] = defaultdict(list)

    def _sync_metadata_from_transfer_queue(self) -> None:
        # veRL's private refresh of finished groups, the only one there is (anchors.py:
        # "veRL ReplayBuffer._sync_metadata_from_transfer_queue").
        super()._sync_metadata_from_transfer_queue()
        self._observe_finished("train")

    def _observe_finished(self, partition_id: str) -> None:
        """Read the judge's scores of groups finished since the last poll (before filtering)."""
        import transfer_queue as tq

        finished = self.finished_keys[partition_id]
        self._observed &= finished
        new = finished - self._observed
        if not new or active_curriculum() is None:
            return
        keys = [k for k in self.partitions[partition_id] if group_uid(k) in new]
        if keys:
            data = tq.kv_batch_get(
                keys=keys, partition_id=partition_id, select_fields=["extra_fields", "extra_info"]
            )
            for extra, value in zip(data["extra_fields"], data["extra_info"], strict=True):
                info = getattr(value, "data", value)
                problem = info.get(PROBLEM_FIELD) if isinstance(info, Mapping) else None
                score = _metric(extra, self.score_key)
                if problem is not None and score is not None:
                    self._step_scores[str(problem)].append(score)
        self._observed |= new

    def sample(self, global_steps: int, partition_id: str, batch_size: int) -> tuple[Any, dict]:
        batch, metrics = super().sample(global_steps, partition_id, batch_size)
        curriculum = active_curriculum()
        if partition_id == "train" and curriculum is not None:
            with _LOCK:
                report = curriculum.observe(dict(self._step_scores))
            self._step_scores.clear()
            metrics.update(report.metrics())
            if report.promoted_to is not None:
                print(
                    f"curriculum: step {global_steps}: promoted to {report.promoted_to} "
                    f"({report.reason})",
                    flush=True,
                )
        return batch, metrics
