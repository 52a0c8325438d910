"""What identifies an evaluation: the model, the data, and every setting that changes a sample
or its verdict. It is stored in `<eval.out>/meta.json`; a rerun with another identity is
refused, and the default `eval.out` is named after it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codefu_trainer.evaluation.config import EvalConfig, eval_tiers
from codefu_trainer.evaluation.problems import split_file
from codefu_trainer.run.compose import PrerequisiteError
from codefu_trainer.run.config import ModelKind

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_SAMPLED_BYTES = 1 << 20  # a large weight file is fingerprinted by its size, head and tail


def resolve_model(cfg: EvalConfig) -> str:
    """model.path as an absolute local directory, or a Hugging Face model id.

    Raises PrerequisiteError with what to pass instead when it is neither.
    """
    raw = cfg.model.path
    path = Path(raw).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise PrerequisiteError(
                f"model.path={raw}: {path} has no config.json, so it is not a Hugging Face "
                "model directory; pass a run's model/ or base_model/ directory."
            )
        return str(path.resolve())
    if cfg.model.kind is ModelKind.tiny and not path.exists():
        raise PrerequisiteError(
            f"model.path={raw}: no such directory. model=tiny is the rehearsal's model: pass "
            "model.path=<run dir>/model (trained) or model.path=<run dir>/base_model (its start)."
        )
    # `org/name` is a hub id unless `org` is a local directory (runs/<typo> is a path).
    if path.exists() or not _HUB_ID.match(raw) or path.parent.is_dir():
        raise PrerequisiteError(
            f"model.path={raw}: no such model directory. Pass a local Hugging Face model "
            "directory (a run's model/ or base_model/) or a hub id such as org/name."
        )
    return raw


def model_fingerprint(model: str) -> str:
    """A digest of a local model directory's files (small ones whole, weights sampled);
    a hub id stands for itself."""
    root = Path(model)
    if not root.is_dir():
        return model
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        size = path.stat().st_size
        h.update(f"{path.relative_to(root)}\0{size}\0".encode())
        with path.open("rb") as f:
            if size <= 2 * _SAMPLED_BYTES:
                h.update(f.read())
            else:
                h.update(f.read(_SAMPLED_BYTES))
                f.seek(size - _SAMPLED_BYTES)
                h.update(f.read())
    return h.hexdigest()[:16]


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def evaluation_identity(
    cfg: EvalConfig, model: str, backend: str, max_prompt_chars: int | None
) -> dict[str, Any]:
    """Flat key → value: the model, the data files, the sampling settings, the reward rules."""
    e = cfg.eval
    identity: dict[str, Any] = {
        "model.path": model,
        "model.fingerprint": model_fingerprint(model),
        "eval.protocol": e.protocol,
        "eval.split": e.split.value,
        "eval.tiers": eval_tiers(cfg),
        "eval.samples": e.samples,
        "eval.temperature": e.temperature,
        "eval.top_p": e.top_p,
        "eval.max_new_tokens": e.max_new_tokens,
        "eval.stop": list(e.stop),
        "eval.lcb_style": e.lcb_style,
        "eval.release": e.release,
        "eval.max_prompt_chars": max_prompt_chars,
        "eval.limit": e.limit,
        "eval.batch_size": e.batch_size,
        "eval.seed": e.seed,
        "eval.backend": backend,
    }
    for tier in eval_tiers(cfg):
        path = split_file(cfg, tier)
        identity[f"data.{tier}/{path.name}"] = _file_digest(path) if path.is_file() else None
    rules = dataclasses.asdict(cfg.reward)
    for key in ("worker", "deadline"):  # where and how long judging runs, not its verdicts
        rules.pop(key)
    identity.update({f"reward.{k}": _plain(v) for k, v in sorted(rules.items())})
    return identity


def _plain(value: Any) -> Any:
    return value.value if hasattr(value, "value") else value


def default_out_dir(cfg: EvalConfig, identity: Mapping[str, Any]) -> Path:
    """`<eval.root_dir>/eval/<model label>_<tiers>_<split>_<identity digest>`."""
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:8]
    parts = Path(cfg.model.path).expanduser().parts[-2:]
    label = re.sub(r"[^\w.-]+", "-", "-".join(parts)).strip("-") or "model"
    tiers = "+".join(eval_tiers(cfg))
    name = f"{label}_{tiers}_{cfg.eval.split.value}_{digest}"
    return Path(cfg.eval.root_dir).expanduser().resolve() / "eval" / name
