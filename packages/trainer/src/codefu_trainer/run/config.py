"""Typed configuration of a training run (stage 1 of the two-stage composition).

`conf/train.yaml` composes the groups `cluster`, `data`, `reward`, `model` into a
`TrainConfig`. Every group is backed by a dataclass registered in Hydra's ConfigStore,
so a misspelled key or a wrong type is an error naming the key. veRL's own configuration
(`conf/verl/grpo.yaml`) is composed afterwards (`codefu_trainer.training.verl.config`).
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field
from pathlib import Path

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from codefu_data.config import DataConfig
from codefu_launcher.plan import JUDGE_RESOURCE
from codefu_trainer.reward.config import RewardConfig

SAGEMAKER_CHECKPOINT_DIR = "/opt/ml/checkpoints"


@dataclass
class ClusterConfig:
    """Nodes, GPUs and resource pools of the machines a run uses."""

    name: str = MISSING
    # A registered cluster kind (`run.cluster_kinds.CLUSTER_KINDS`: local, cpu, cpu_verl,
    # sagemaker); settings only its clusters have come from the schema they start from.
    kind: str = MISSING
    # GPU nodes that train (veRL's global resource pool is nnodes x gpus_per_node).
    nnodes: int = 1
    # 0: every GPU visible on this machine (local only).
    gpus_per_node: int = 0
    # The CPU-only hosts judge: the launcher gives them its Ray resource
    # (codefu_launcher.plan.JUDGE_RESOURCE), which then becomes reward.worker.resource.
    # False: the reward config decides.
    judge_hosts: bool = False
    # The `model` group option this cluster runs unless the command line picks one
    # (cpu: tiny). Hydra only lets the primary config override another group's choice.
    default_model: str | None = None
    # Likewise the `reward` group option (cpu: all_or_nothing).
    default_reward: str | None = None
    # GPU memory (GiB, as torch reports it) for the memory plan. None: from the SageMaker
    # instance type (codefu_launcher.instances.INSTANCE_TYPES), or nvidia-smi for `local`.
    gpu_memory_gib: float | None = None


class ModelKind(enum.Enum):
    hf = "hf"  # a Hugging Face model id or a local directory in HF format
    tiny = "tiny"  # a randomly initialised model built offline from a config (rehearsal)


@dataclass
class TinyModelConfig:
    """Shape of the random Qwen2-style model the rehearsal builds offline."""

    hidden_size: int = 64
    intermediate_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    max_position_embeddings: int = 2048


@dataclass
class ModelShapeConfig:
    """The config.json keys the GPU memory plan reads, for a model whose config.json is not
    on this machine (a hub id not in the Hugging Face cache, an s3:// path)."""

    hidden_size: int | None = None
    intermediate_size: int | None = None
    num_hidden_layers: int | None = None
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None
    vocab_size: int | None = None
    max_position_embeddings: int | None = None
    head_dim: int | None = None  # None: hidden_size / num_attention_heads
    tie_word_embeddings: bool = False
    attention_bias: bool = True


@dataclass
class ModelConfig:
    name: str = MISSING
    kind: ModelKind = ModelKind.hf
    path: str = MISSING  # HF id, local dir, or s3:// URI (a SageMaker input channel)
    trust_remote_code: bool = False
    tiny: TinyModelConfig = field(default_factory=TinyModelConfig)
    shape: ModelShapeConfig = field(default_factory=ModelShapeConfig)
    # veRL's actor_rollout_ref.model.use_fused_kernels (log-probs and entropy without a
    # (tokens x vocab) logits tensor). None: the veRL config decides.
    use_fused_kernels: bool | None = None


@dataclass
class TrackingConfig:
    """Console + MLflow. Default store: SQLite in the run directory."""

    mlflow: bool = True
    # None: sqlite:///<run dir>/mlflow.db. A SageMaker managed MLflow tracking server
    # ARN (arn:aws:sagemaker:...:mlflow-tracking-server/NAME) also works here; it needs
    # the `sagemaker-mlflow` plugin installed beside mlflow.
    tracking_uri: str | None = None
    experiment: str = "codefu-grpo"


@dataclass
class RunConfig:
    """Where a run writes: resolved configs, checkpoints, metrics, final model."""

    name: str = "codefu-grpo"
    root_dir: str = "runs"
    # None: <root_dir>/<name>-<timestamp>; set it to resume a run in place.
    dir: str | None = None
    seed: int = 0
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    # cluster=cpu: after training, evaluate the final model on the test split (pass@k,
    # codefu_trainer.evaluation) into <run dir>/eval and this run's MLflow run.
    evaluate_final: bool = False
    # veRL runs: merge the newest checkpoint into the final Hugging Face model after
    # training. False leaves the checkpoints only (`codefu-train --smoke`'s first stage).
    export_final: bool = True


@dataclass
class RehearsalConfig:
    """The CPU rehearsal (cluster=cpu). Algorithm settings come from the veRL config, except
    the learning rate when `learning_rate` is set."""

    # Every random choice: tiny model init, warm-start order, sampling, data order.
    seed: int = 0
    steps: int = 20
    # Train on the first N problems of the train split that have an accepted program in
    # data.language no longer than `max_program_bytes` (the warm start memorises it, and a
    # rejected one where the source has one).
    problems: int = 3
    # And on the first N problems that have no accepted program in data.language (LiveCodeBench
    # ships none), trained beside those but taught nothing by the warm start. With
    # problems=0 the warm start is skipped: a tiny model then starts from random weights.
    problems_without_programs: int = 0
    max_program_bytes: int = 400
    prompts_per_step: int = 3
    num_generations: int = 8  # the group size (veRL: rollout.n)
    max_prompt_tokens: int = 160  # byte tokens (= chars); longer prompts keep their start
    max_completion_tokens: int = 448
    # The tiny model learns far faster than a 7B: None keeps the veRL config's actor lr.
    learning_rate: float | None = 1.0e-4
    # Supervised warm start of the tiny random model on, per training problem, its accepted
    # and rejected programs in data.language and a copy of the accepted one broken so it
    # fails to compile (the last two twice as often; without a rejected program, the
    # accepted and the broken one), so the initial policy samples them, the accepted one the
    # least, and GRPO has a real choice.
    # 0 disables. Only for model.kind=tiny.
    warmup_steps: int = 300
    warmup_lr: float = 3e-3
    # The warm-started base model is cached here, keyed by the settings that determine it.
    # None: <cache root>/rehearsal, the root $CODEFU_CACHE_DIR (default ~/.cache/codefu).
    cache_dir: str | None = None
    # -1 flips the judge's scores before the update (a control: the score must then not rise).
    reward_sign: int = 1
    # Below 1 so a sample of a memorised ~300-byte program seldom picks a wrong byte; the
    # choice between the memorised programs stays open.
    temperature: float = 0.7
    save_steps: int = 1
    # True: continue from the newest checkpoint in the run directory (needs run.dir).
    resume: bool = True


@dataclass
class TrainConfig:
    """The primary training configuration (conf/train.yaml)."""

    cluster: ClusterConfig = MISSING
    data: DataConfig = MISSING
    reward: RewardConfig = MISSING
    model: ModelConfig = MISSING
    run: RunConfig = field(default_factory=RunConfig)
    rehearsal: RehearsalConfig = field(default_factory=RehearsalConfig)


# Top-level keys of TrainConfig: an override whose first key is one of these is ours.
OUR_KEYS = ("cluster", "data", "reward", "model", "run", "rehearsal")


def register_configs() -> None:
    """Register the schemas in Hydra's ConfigStore (idempotent)."""
    from codefu_data.config import register_configs as register_data_configs
    from codefu_trainer.reward.config import register_reward_schema

    register_data_configs()
    register_reward_schema()
    cs = ConfigStore.instance()
    cs.store(name="codefu_train_schema", node=TrainConfig)
    cs.store(group="cluster", name="codefu_cluster_schema", node=ClusterConfig)
    cs.store(group="model", name="codefu_model_schema", node=ModelConfig)


def judge_on_judge_hosts(cluster: ClusterConfig, reward: RewardConfig) -> None:
    """With `cluster.judge_hosts`, the reward's workers go where the launcher put its judge
    resource."""
    if cluster.judge_hosts:
        reward.worker.resource = JUDGE_RESOURCE


def in_sagemaker_job(env: dict[str, str] | None = None) -> bool:
    """True inside a SageMaker training job (its training environment is set)."""
    env = dict(os.environ) if env is None else env
    return bool(env.get("SM_TRAINING_ENV") or env.get("TRAINING_JOB_NAME"))


def checkpoint_dir(run_dir: Path, env: dict[str, str] | None = None) -> Path:
    """/opt/ml/checkpoints inside SageMaker (synced to S3), else <run dir>/checkpoints."""
    if in_sagemaker_job(env):
        return Path(SAGEMAKER_CHECKPOINT_DIR)
    return run_dir / "checkpoints"


def final_model_dir(run_dir: Path, env: dict[str, str] | None = None) -> Path:
    """SM_MODEL_DIR inside SageMaker (uploaded to the output S3 URI), else <run dir>/model."""
    env = dict(os.environ) if env is None else env
    if env.get("SM_MODEL_DIR"):
        return Path(env["SM_MODEL_DIR"])
    return run_dir / "model"


def mlflow_tracking_uri(cfg: TrackingConfig, run_dir: Path) -> str:
    """The MLflow tracking URI: configured (URI or SageMaker ARN) or a SQLite file in the run."""
    if cfg.tracking_uri:
        return cfg.tracking_uri
    return f"sqlite:///{(run_dir / 'mlflow.db').resolve()}"


def names_a_folder(model_path: str) -> bool:
    """Whether `model.path` names a folder (of this machine, or of the job's hosts) rather
    than a Hugging Face model id (`org/name`) or an s3:// prefix."""
    if model_path.startswith("s3://"):
        return False
    return (
        model_path.startswith(("/", ".", "~"))
        or model_path.count("/") > 1
        or Path(model_path).expanduser().exists()
    )


def data_files(cfg: TrainConfig) -> tuple[Path, Path]:
    """The prepared train/test parquet files of the configured tier."""
    root = Path(cfg.data.out_dir).expanduser()
    if not str(root).startswith("s3:"):
        root = root.resolve()
    return root / cfg.data.tier / "train.parquet", root / cfg.data.tier / "test.parquet"
