"""The problems an evaluation asks: the processed parquet's prompts as training used them.

Prompts are the `prompt` column's chat messages. The CPU rehearsal cuts every message to
`rehearsal.max_prompt_tokens` characters for its tiny model's short context; evaluating such
a model cuts them the same way, with the rehearsal's own loader (`load_prompts`).

A tier whose split holds no problem (a file, or a date window, without some difficulty) is
left out and named (`absent_tiers`); the others are evaluated.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from codefu_trainer.evaluation.config import EvalConfig, eval_tiers
from codefu_trainer.evaluation.summary import DIFFICULTY_ORDER
from codefu_trainer.run.compose import PrerequisiteError
from codefu_trainer.run.config import ModelKind, RehearsalConfig
from codefu_trainer.run.prepared_data import check_manifest, check_parquet
from codefu_trainer.run.prompt_rows import load_prompts


@dataclass(frozen=True)
class EvalProblem:
    """One held-out problem: its prompt messages, its ground truth (JSON text), and what the
    summary groups it by (its source's difficulty label, platform, contest date: None where
    the source states none)."""

    name: str
    tier: str
    rating: int | None  # Codeforces rating
    prompt: list[dict[str, str]]
    ground_truth: str
    difficulty: str | None = None
    platform: str | None = None
    contest_date: str | None = None


def split_file(cfg: EvalConfig, tier: str) -> Path:
    """`<data.out_dir>/<tier>/<eval.split>.parquet`."""
    return Path(cfg.data.out_dir).expanduser() / tier / f"{cfg.eval.split.value}.parquet"


def prompt_char_limit(cfg: EvalConfig) -> int | None:
    """The per-message character cut (see `EvalSettings.max_prompt_chars`)."""
    if cfg.eval.max_prompt_chars is not None:
        return cfg.eval.max_prompt_chars
    if cfg.model.kind is not ModelKind.tiny:
        return None
    recorded = Path(cfg.model.path).expanduser().parent / "config" / "train.yaml"
    if recorded.is_file():
        value = OmegaConf.select(OmegaConf.load(recorded), "rehearsal.max_prompt_tokens")
        if isinstance(value, int):
            return value
    return RehearsalConfig().max_prompt_tokens


def absent_tiers(cfg: EvalConfig) -> list[str]:
    """The evaluated tiers whose split was prepared and holds no problem."""
    import pyarrow.parquet as pq

    absent = []
    for tier in eval_tiers(cfg):
        path = split_file(cfg, tier)
        if path.is_file():
            check_parquet(path, path.parent.parent)  # corrupt or not prepared: exit 2, its name
            if pq.ParquetFile(path).metadata.num_rows == 0:
                absent.append(tier)
    return absent


def absent_record(cfg: EvalConfig) -> dict[str, list[str]]:
    """Each absent tier (`absent_tiers`) and LiveCodeBench's difficulties that map to it
    (data.difficulty_tiers)."""
    return {
        tier: [d for d in DIFFICULTY_ORDER if cfg.data.difficulty_tiers.get(d) == tier]
        for tier in absent_tiers(cfg)
    }


def load_problems(cfg: EvalConfig, max_prompt_chars: int | None) -> list[EvalProblem]:
    """Every evaluated tier's split in order, the first `eval.limit` problems; tiers without
    a problem left out (PrerequisiteError when every one is)."""
    import pyarrow.parquet as pq

    problems: list[EvalProblem] = []
    limit = cfg.eval.limit
    # A manifest of another format, or prompts asking for another language: exit 2, the fix.
    check_manifest(Path(cfg.data.out_dir).expanduser(), cfg.data.language)
    empty = absent_tiers(cfg)
    if empty == eval_tiers(cfg):
        raise PrerequisiteError(
            f"{Path(cfg.data.out_dir).expanduser()} holds no {cfg.eval.split.value} problem of "
            f"tier {', '.join(empty)}: prepare data that has some (data.source, the window "
            "data.date_from/data.date_to), or evaluate other tiers (eval.tiers)."
        )
    for tier in eval_tiers(cfg):
        path = split_file(cfg, tier)
        if not path.is_file():
            raise PrerequisiteError(
                f"No prepared data for tier {tier!r}: {path} is missing. Run `nox -s prepare` "
                "first, or point data.out_dir at a prepared dataset."
            )
        left = None if limit is None else limit - len(problems)
        if left == 0:
            break
        if tier in empty:
            continue
        try:
            rows = load_prompts(path, max_prompt_chars or sys.maxsize, left)
        except ValueError as exc:
            raise PrerequisiteError(str(exc)) from exc
        infos = pq.read_table(path, columns=["extra_info"]).column(0).to_pylist()
        problems += [
            _problem(row, info or {}, tier) for row, info in zip(rows, infos, strict=False)
        ]
    return problems


def _problem(row: dict[str, Any], info: dict[str, Any], tier: str) -> EvalProblem:
    truth = json.loads(row["ground_truth"])
    rating = truth.get("cf_rating")
    return EvalProblem(
        name=row["name"] or str(truth.get("name", "")),
        tier=tier,
        rating=int(rating) if rating else None,
        prompt=row["prompt"],
        ground_truth=row["ground_truth"],
        difficulty=info.get("difficulty"),
        platform=info.get("platform"),
        contest_date=info.get("contest_date"),
    )


def problem_limits(problems: Sequence[EvalProblem]) -> dict[str, list[float]]:
    """The problems' per-test limits as their ground truths state them: `time_seconds` and
    `memory_bytes`, each [lowest, highest] (the judge scales the time by
    `data.time_limit_scale` and the language's factor, `data.time_factors`)."""
    seconds, memory = [], []
    for p in problems:
        truth = json.loads(p.ground_truth)
        limit = truth.get("time_limit") or {}
        seconds.append(float(limit.get("seconds") or 0) + float(limit.get("nanos") or 0) / 1e9)
        memory.append(int(truth.get("memory_limit_bytes") or 0))
    return {
        "time_seconds": [min(seconds, default=0.0), max(seconds, default=0.0)],
        "memory_bytes": [min(memory, default=0), max(memory, default=0)],
    }
