"""Typed configuration of an evaluation (`conf/eval.yaml`) and its composition.

`conf/eval.yaml` composes the same groups as training (`cluster`, `data`, `reward`,
`model`) plus `eval.*`, typed by `EvalConfig` (registered in Hydra's ConfigStore as
`codefu_eval_schema`), so a misspelled key or a wrong type is an error naming the key.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from codefu_data.config import DataConfig
from codefu_trainer.evaluation.livecodebench import STYLES, lcb_style, release_names
from codefu_trainer.reward.config import RewardConfig
from codefu_trainer.run.cluster_kinds import cluster_kind
from codefu_trainer.run.compose import GROUPS, compose_train, typed_config
from codefu_trainer.run.config import (
    ClusterConfig,
    ModelConfig,
    TrackingConfig,
    judge_on_judge_hosts,
    register_configs,
)
from codefu_trainer.run.overrides import ConfigError, Override, group_options, parse_override

SCHEMA_NAME = "codefu_eval_schema"
# The config group of the protocols (conf/protocol/<name>.yaml), chosen by eval.protocol.
PROTOCOL_GROUP = "protocol"
DEFAULT_PROTOCOL = "codefu"
PROTOCOL_KEY = "eval.protocol"


class Split(enum.StrEnum):
    """Which processed split is evaluated (member names equal values: OmegaConf reads names)."""

    test = "test"
    train = "train"


class Backend(enum.StrEnum):
    """How responses are generated."""

    auto = "auto"  # vllm when this machine has an NVIDIA GPU (and cluster.kind is not cpu)
    vllm = "vllm"  # vLLM's offline engine, tensor parallel over cluster.gpus_per_node
    transformers = "transformers"  # transformers `generate`, batched (CPU, or one GPU)


@dataclass
class EvalSettings:
    """What is evaluated, how responses are sampled, where results go."""

    # The named preset these settings started from (conf/protocol/<name>.yaml, chosen with
    # eval.protocol=<name>; its settings are defaults an override still changes).
    protocol: str = DEFAULT_PROTOCOL
    # true: evaluate data.source, prepared with the data settings into
    # <root_dir>/eval/data/<source>_<digest>/ (a folder already prepared, one holding a
    # manifest.json, is read as it is); false: the prepared data.out_dir.
    prepare: bool = False
    split: Split = Split.test
    # Tiers evaluated together (each broken down in the summary); empty: data.tier.
    tiers: list[str] = field(default_factory=list)
    samples: int = 10  # responses per problem (n of pass@k)
    k: list[int] = field(default_factory=lambda: [1, 5, 10])
    # DeepSeek-R1's recommended sampling for its distilled models (the CodeFu base model).
    temperature: float = 0.6
    top_p: float = 0.95
    max_new_tokens: int = 20480  # training's response length (conf/verl/grpo.yaml)
    # Generation stops at the first of these strings, which the response then ends before
    # (LiveCodeBench's runner: ["###"]).
    stop: list[str] = field(default_factory=list)
    # LiveCodeBench's model style (generic, deepseek_r1, or auto: from model.path): its
    # prompt for that style, as data.prompt.style (evaluation.livecodebench). None: the
    # data's own prompts.
    lcb_style: str | None = None
    # A LiveCodeBench release (release_v1 … release_v6, release_latest, v1 … v6, vA_vB):
    # of data.source's files, the ones its dataset's version_tag selects. None: all of them.
    release: str | None = None
    # Each prompt message cut to this many characters. None: as training saw them, i.e.
    # for model.kind=tiny the rehearsal's cut (rehearsal.max_prompt_tokens of the run that
    # wrote model.path, else its default), for other models the whole prompt.
    max_prompt_chars: int | None = None
    limit: int | None = None  # the first N problems only
    batch_size: int = 32  # samples generated, judged and written together
    seed: int = 0
    backend: Backend = Backend.auto
    gpu_memory_utilization: float = 0.9  # vLLM
    # Results directory. None: <root_dir>/eval/<model>_<tiers>_<split>_<settings digest>,
    # so running the same command again resumes it.
    out: str | None = None
    root_dir: str = "runs"
    tracking: TrackingConfig = field(
        default_factory=lambda: TrackingConfig(experiment="codefu-eval")
    )


@dataclass
class EvalConfig:
    """The primary evaluation configuration (conf/eval.yaml)."""

    cluster: ClusterConfig = MISSING
    data: DataConfig = MISSING
    reward: RewardConfig = MISSING
    model: ModelConfig = MISSING
    eval: EvalSettings = field(default_factory=EvalSettings)


def register_eval_schema() -> None:
    """Register the schemas of conf/eval.yaml in Hydra's ConfigStore (idempotent)."""
    register_configs()
    ConfigStore.instance().store(name=SCHEMA_NAME, node=EvalConfig)


def protocol_overrides(conf_dir: Path, overrides: Sequence[str]) -> list[Override]:
    """The overrides parsed, `eval.protocol=<name>` as the choice of the protocol group
    (`protocol=<name>`), so the protocol's settings come before every other override and
    an override of one of them wins. ConfigError naming the protocols for an unknown one."""
    parsed = []
    for ov in map(parse_override, overrides):
        if ov.key != PROTOCOL_KEY or ov.op != "" or ov.value is None:
            parsed.append(ov)
            continue
        choices = group_options(conf_dir, PROTOCOL_GROUP)
        if ov.value not in choices:
            raise ConfigError(
                f"{ov.text}: no such protocol; choose one of {', '.join(choices)} "
                f"(files in {conf_dir / PROTOCOL_GROUP})."
            )
        parsed.append(Override(f"{PROTOCOL_GROUP}={ov.value}", "", PROTOCOL_GROUP, ov.value))
    return parsed


def compose_eval(conf_dir: Path, overrides: Sequence[str]) -> EvalConfig:
    """conf/eval.yaml with Hydra overrides, checked; raises ConfigError naming what to fix."""
    register_eval_schema()
    node = compose_train(
        conf_dir,
        protocol_overrides(conf_dir, overrides),
        config_name="eval",
        groups=(*GROUPS, PROTOCOL_GROUP),
    )
    cfg = typed_config(node, EvalConfig, "conf/eval.yaml", SCHEMA_NAME)
    judge_on_judge_hosts(cfg.cluster, cfg.reward)
    if cfg.eval.lcb_style is not None:  # LiveCodeBench's prompt for the model's style
        cfg.eval.lcb_style = lcb_style(cfg.eval.lcb_style, cfg.model.path)
        cfg.data.prompt.style = STYLES[cfg.eval.lcb_style]
    check_eval_config(cfg)
    return cfg


def eval_tiers(cfg: EvalConfig) -> list[str]:
    """The tiers evaluated: eval.tiers, or data.tier."""
    return list(dict.fromkeys(cfg.eval.tiers)) or [cfg.data.tier]


def check_eval_config(cfg: EvalConfig) -> None:
    """Checks across keys that types cannot express (the data group's: `typed_config`)."""
    e = cfg.eval
    unknown = [t for t in eval_tiers(cfg) if t not in cfg.data.tiers]
    if unknown:
        raise ConfigError(
            f"eval.tiers: {', '.join(map(repr, unknown))} is not a tier; "
            f"choose from {sorted(cfg.data.tiers)}."
        )
    if e.samples < 1:
        raise ConfigError("eval.samples must be at least 1 (responses per problem).")
    if not e.k or min(e.k) < 1:
        raise ConfigError("eval.k must list at least one k >= 1, e.g. eval.k=[1,5,10].")
    if max(e.k) > e.samples:
        raise ConfigError(
            f"eval.k={list(e.k)} asks for pass@{max(e.k)} but eval.samples={e.samples}: pass@k "
            f"needs at least k samples per problem. Raise eval.samples to {max(e.k)} or "
            "drop the larger k."
        )
    if e.release is not None:
        release_names(e.release)
    if any(not stop for stop in e.stop):
        raise ConfigError("eval.stop lists an empty string; list the strings to stop at.")
    if e.temperature < 0 or not 0 < e.top_p <= 1:
        raise ConfigError("eval.temperature must be >= 0 and eval.top_p within (0, 1].")
    for key in ("max_new_tokens", "batch_size", "limit", "max_prompt_chars"):
        value = getattr(e, key)
        if value is not None and value < 1:
            raise ConfigError(f"eval.{key}={value} must be at least 1.")
    if not cluster_kind(cfg.cluster).runs_here or cfg.cluster.nnodes != 1:
        raise ConfigError(
            f"cluster={cfg.cluster.name}: codefu-eval generates on this machine; use "
            "cluster=local (its GPUs, or transformers on CPU) or cluster=cpu."
        )
