"""A decoder-only model's shape, from its `config.json`, for the memory plan.

Where the shape comes from, first found wins: `config.json` in a local `model.path`; the
Hugging Face cache's copy of a hub id's `config.json` (never downloaded here); the model
group's `shape` (conf/model/*.yaml names the shipped models' shapes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

# config.json keys this plan reads; every one is required (head_dim and the bias are derived).
SHAPE_KEYS = (
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "vocab_size",
    "max_position_embeddings",
)


class ShapeError(ValueError):
    """The model's shape cannot be read; the message says what to give instead."""


@dataclass(frozen=True)
class ModelShape:
    """What memory depends on: sizes of the decoder, its attention heads and the vocabulary."""

    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    vocab_size: int
    max_position_embeddings: int
    head_dim: int
    tie_word_embeddings: bool = False
    attention_bias: bool = True  # Qwen2 has q/k/v biases
    source: str = ""

    @property
    def layer_params(self) -> int:
        """Parameters of one decoder layer: attention, gated MLP, two RMSNorms."""
        h, d = self.hidden_size, self.head_dim
        q, kv = self.num_attention_heads * d, self.num_key_value_heads * d
        attention = h * (q + 2 * kv) + q * h + ((q + 2 * kv) if self.attention_bias else 0)
        return attention + 3 * h * self.intermediate_size + 2 * h

    @property
    def embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size

    @property
    def head_params(self) -> int:
        """The LM head's own parameters (0 when tied to the embeddings)."""
        return 0 if self.tie_word_embeddings else self.vocab_size * self.hidden_size

    @property
    def params(self) -> int:
        return (
            self.num_hidden_layers * self.layer_params
            + self.embedding_params
            + self.head_params
            + self.hidden_size  # final norm
        )

    @property
    def root_params(self) -> int:
        """What FSDP keeps outside the decoder-layer units: embeddings, final norm, head."""
        return self.embedding_params + self.head_params + self.hidden_size


def shape_from_dict(config: dict[str, Any], source: str) -> ModelShape:
    """The shape in a config.json's dict (a multimodal config's `text_config` too)."""
    if "text_config" in config and "hidden_size" not in config:
        config = config["text_config"]
    missing = [k for k in SHAPE_KEYS if k not in config and k != "num_key_value_heads"]
    if missing:
        raise ShapeError(f"{source} lacks {', '.join(missing)}: not a decoder config.json.")
    heads = int(config["num_attention_heads"])
    return ModelShape(
        hidden_size=int(config["hidden_size"]),
        intermediate_size=int(config["intermediate_size"]),
        num_hidden_layers=int(config["num_hidden_layers"]),
        num_attention_heads=heads,
        num_key_value_heads=int(config.get("num_key_value_heads") or heads),
        vocab_size=int(config["vocab_size"]),
        max_position_embeddings=int(config["max_position_embeddings"]),
        head_dim=int(config.get("head_dim") or int(config["hidden_size"]) // heads),
        tie_word_embeddings=bool(config.get("tie_word_embeddings", False)),
        attention_bias=bool(config.get("attention_bias", config.get("model_type") == "qwen2")),
        source=source,
    )


def read_config_json(path: Path) -> ModelShape:
    try:
        config = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ShapeError(f"cannot read {path}: {exc}") from exc
    if not isinstance(config, dict):
        raise ShapeError(f"{path} is not a JSON object.")
    return shape_from_dict(config, str(path))


def cached_hub_config(repo_id: str) -> Path | None:
    """The Hugging Face cache's config.json of `repo_id`, if one is cached (no download)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    try:
        found = try_to_load_from_cache(repo_id, "config.json")
    except ValueError:  # not a repo id
        return None
    return Path(found) if isinstance(found, str) else None


def group_shape(shape: Any, model_name: str) -> ModelShape | None:
    """The model group's `shape` (codefu_trainer.run.config.ModelShapeConfig), if complete."""
    values = {f.name: getattr(shape, f.name) for f in fields(shape)}
    if any(values.get(k) is None for k in SHAPE_KEYS):
        return None
    values["source"] = f"conf/model/{model_name}.yaml (model.shape)"
    return shape_from_dict(values, values["source"])


def resolve_shape(model_path: str, group: Any, model_name: str) -> ModelShape:
    """The shape of `model_path` (see the module docstring for the order)."""
    local = Path(model_path).expanduser()
    if local.is_dir():
        config = local / "config.json"
        if not config.is_file():
            raise ShapeError(
                f"model.path={model_path} is a directory without config.json: give the model's "
                "Hugging Face directory (a directory holding only its config.json is enough for "
                "the plan)."
            )
        return read_config_json(config)
    if not model_path.startswith("s3://"):
        cached = cached_hub_config(model_path)
        if cached is not None:
            return read_config_json(cached)
    named = group_shape(group, model_name)
    if named is not None:
        return named
    raise ShapeError(
        f"the shape of model.path={model_path} is unknown here (no local config.json, none in "
        "the Hugging Face cache, no model.shape in its model group): give model.path=<directory "
        "with its config.json>, or set model.shape.hidden_size=... model.shape.num_hidden_layers"
        "=... (every key of config.json that the plan reads: " + ", ".join(SHAPE_KEYS) + ")."
    )
