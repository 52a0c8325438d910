"""Stage 2: veRL's `ppo_trainer` config (conf/verl/grpo.yaml) derived from our TrainConfig.

Composed in its own Hydra context whose search path holds veRL's config package and
conf/verl only (veRL's `data`, `reward`, `model` groups would clash with ours).
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from codefu_data.compose import ComposeError, compose_config
from codefu_trainer.reward.verl_metrics import REWARD_CONFIG_KWARG
from codefu_trainer.run.compose import PrerequisiteError
from codefu_trainer.run.config import (
    TrainConfig,
    checkpoint_dir,
    data_files,
    mlflow_tracking_uri,
)
from codefu_trainer.run.overrides import (
    ConfigError,
    Override,
    as_typed,
    check_group_choices,
    check_keys,
    dotted_keys,
    hydra_value,
)

VERL_CONFIG_NAME = "grpo"
# Config groups of conf/verl/ (`recipe=dapo`, `curriculum=tiers`): options are files, not keys.
VERL_GROUPS = ("recipe", "curriculum")
# veRL's default when override_config names none (verl/workers/config/model.py).
VERL_DEFAULT_ATTENTION = "flash_attention_2"
# Flash attention implementations → the distribution transformers loads them from.
FLASH_ATTENTION = {"flash_attention_2": "flash-attn", "flash_attention_3": "flash-attn-3"}
SP_KEYS = (
    "actor_rollout_ref.actor.ulysses_sequence_parallel_size",
    "actor_rollout_ref.actor.fsdp_config.ulysses_sequence_parallel_size",
    "actor_rollout_ref.ref.ulysses_sequence_parallel_size",
    "actor_rollout_ref.ref.fsdp_config.ulysses_sequence_parallel_size",
)
ATTENTION_KEY = "actor_rollout_ref.model.override_config.attn_implementation"
TP_KEY = "actor_rollout_ref.rollout.tensor_model_parallel_size"
# Where the reward settings reach veRL's reward workers (`reward.verl_adapter`).
REWARD_CONFIG_KEY = f"reward.custom_reward_function.reward_kwargs.{REWARD_CONFIG_KWARG}"


@dataclass(frozen=True)
class ClusterExtension:
    """What a cluster kind adds to the derived veRL config, so that this module needs none of
    that kind's modules (veRL on CPU's: `verl.cpu.config.EXTENSION`, which its kind passes)."""

    # Adjusts our config before anything is derived from it (e.g. the judge's worker count).
    prepare: Callable[[TrainConfig], None]
    # veRL keys added after the derived ones, before the user's.
    values: Callable[[TrainConfig, Path], dict[str, Any]]
    # Added to the environment of veRL's Ray processes.
    env_vars: Mapping[str, str] = field(default_factory=dict)


def derived_values(
    cfg: TrainConfig,
    run_dir: Path,
    gpus_per_node: int,
    env: Mapping[str, str] | None = None,
    extension: ClusterExtension | None = None,
) -> dict[str, Any]:
    """veRL keys set from our config: data files, nodes/GPUs, model, checkpoints, tracking;
    then the cluster kind's `extension`, if it has one."""
    train, test = data_files(cfg)
    if extension is not None:
        extension.prepare(cfg)
    reward = OmegaConf.to_container(
        OmegaConf.structured(cfg.reward), resolve=True, enum_to_str=True
    )
    env_vars = {"MLFLOW_TRACKING_URI": mlflow_tracking_uri(cfg.run.tracking, run_dir)}
    values: dict[str, Any] = {
        "data.train_files": [str(train)],
        "data.val_files": [str(test)],
        "data.seed": cfg.run.seed,
        "trainer.nnodes": cfg.cluster.nnodes,
        "trainer.n_gpus_per_node": gpus_per_node,
        "actor_rollout_ref.model.path": cfg.model.path,
        "actor_rollout_ref.model.trust_remote_code": cfg.model.trust_remote_code,
        "trainer.default_local_dir": str(checkpoint_dir(run_dir, dict(env) if env else None)),
        "trainer.project_name": cfg.run.tracking.experiment,
        "trainer.experiment_name": run_dir.name,
        "trainer.logger": ["console", "mlflow"] if cfg.run.tracking.mlflow else ["console"],
        "++ray_kwargs.ray_init.runtime_env.env_vars": env_vars,
        # veRL binds these keywords to the custom reward function in every reward worker
        # (verl.trainer.ppo.reward.get_custom_reward_fn): the reward's one route there.
        f"++{REWARD_CONFIG_KEY}": reward,
    }
    if cfg.model.use_fused_kernels is not None:
        values["actor_rollout_ref.model.use_fused_kernels"] = cfg.model.use_fused_kernels
    if extension is not None:
        env_vars.update(extension.env_vars)
        values.update(extension.values(cfg, run_dir))
    return values


def derived_overrides(values: Mapping[str, Any]) -> list[str]:
    return [f"{k}={hydra_value(v)}" for k, v in values.items()]


def verl_config_dir() -> Path:
    """veRL's own config directory (verl/trainer/config), found without importing veRL
    (Hydra's `pkg://verl.trainer.config` imports the package, and with it torch and Ray)."""
    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        raise PrerequisiteError(
            "veRL is not installed, and conf/verl/grpo.yaml starts from its config: pip "
            "install 'codefu-trainer[train]', or run it through `nox -s train`."
        )
    return Path(spec.submodule_search_locations[0]) / "trainer" / "config"


def compose_verl(conf_dir: Path, overrides: Sequence[str]) -> DictConfig:
    """Compose conf/verl/grpo.yaml with `overrides` (Hydra errors become ConfigError); veRL's
    config files come from `verl_config_dir`, so nothing of veRL is imported."""
    searchpath = f"hydra.searchpath=[{hydra_value('file://' + str(verl_config_dir()))}]"
    try:
        return compose_config(conf_dir / "verl", VERL_CONFIG_NAME, [searchpath, *overrides])
    except ComposeError as exc:
        raise ConfigError(f"veRL config (conf/verl/{VERL_CONFIG_NAME}.yaml): {exc}") from exc


def build_verl_config(
    cfg: TrainConfig,
    conf_dir: Path,
    run_dir: Path,
    user_overrides: Sequence[Override],
    *,
    gpus_per_node: int,
    env: Mapping[str, str] | None = None,
    extension: ClusterExtension | None = None,
) -> DictConfig:
    """The full veRL config: grpo.yaml + derived values (with the cluster's `extension`) +
    the user's veRL overrides."""
    derived = derived_overrides(derived_values(cfg, run_dir, gpus_per_node, env, extension))
    check_group_choices(conf_dir / "verl", user_overrides, VERL_GROUPS)
    groups = [o.text for o in user_overrides if o.key in VERL_GROUPS]
    keys = [o for o in user_overrides if o.key not in VERL_GROUPS]
    if keys:
        # With the chosen recipe/curriculum: their keys can be overridden too.
        base = compose_verl(conf_dir, [*derived, *groups])
        check_keys(
            base,
            keys,
            where="veRL's config (conf/verl/grpo.yaml + ppo_trainer)",
            other_keys=lambda: dotted_keys(OmegaConf.structured(cfg)),
            typed=as_typed,
        )
    return compose_verl(conf_dir, [*derived, *(o.text for o in user_overrides)])


def validate_verl_config(config: DictConfig, check_reward_function: bool = True) -> None:
    """veRL's own checks, as main_ppo runs them, on CPU: `validate_config` (batch sizes,
    parallelism, actor/critic dataclasses), the rollout and algorithm dataclasses, and
    the custom reward function's import."""
    from hydra.errors import InstantiationException
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Disabled critic as ... != gae"
        try:
            validate_config(
                config=config,
                use_reference_policy=need_reference_policy(config),
                use_critic=need_critic(config),
            )
            omega_conf_to_dataclass(config.actor_rollout_ref.rollout)
            omega_conf_to_dataclass(config.algorithm)
        except (AssertionError, ValueError, TypeError, InstantiationException) as exc:
            cause = f" ({exc.__cause__})" if exc.__cause__ else ""
            raise ConfigError(f"veRL rejected the configuration: {exc}{cause}") from exc
    n_gpus = int(config.trainer.nnodes) * int(config.trainer.n_gpus_per_node)
    # Every Ulysses key veRL reads: the deprecated actor/ref keys and their fsdp_config ones.
    groups = {key: int(OmegaConf.select(config, key, default=1) or 1) for key in SP_KEYS}
    groups[TP_KEY] = int(OmegaConf.select(config, TP_KEY, default=1) or 1)
    uneven = {key: size for key, size in groups.items() if n_gpus % size}
    if uneven:
        named = ", ".join(f"{key}={size}" for key, size in uneven.items())
        raise ConfigError(
            f"{n_gpus} GPUs (trainer.nnodes x trainer.n_gpus_per_node) cannot be split into "
            f"groups of {named}: set each to a divisor of {n_gpus}."
        )
    if check_reward_function:
        from verl.utils.import_utils import load_extern_object

        fn = config.reward.custom_reward_function
        try:
            load_extern_object(module_path=fn.path, object_name=fn.name)
        except (ImportError, AttributeError, FileNotFoundError) as exc:
            raise ConfigError(
                f"reward.custom_reward_function {fn.path}:{fn.name} cannot be loaded: {exc}"
            ) from exc


def attention_implementation(config: DictConfig) -> str:
    """The attention veRL builds the actor and reference with."""
    return str(OmegaConf.select(config, ATTENTION_KEY, default=VERL_DEFAULT_ATTENTION))


def check_attention(config: DictConfig, *, loads_here: bool) -> None:
    """Attention settings veRL can carry out.

    veRL implements Ulysses sequence parallelism for LLMs only by patching transformers'
    flash-attention forward (verl/models/transformers/monkey_patch.py); with another
    implementation each GPU would attend within its own slice of the sequence. Flash
    attention needs its package where the model loads (`loads_here`: this machine).
    """
    impl = attention_implementation(config)
    sp = max(int(OmegaConf.select(config, key, default=1) or 1) for key in SP_KEYS)
    if sp > 1 and impl not in FLASH_ATTENTION:
        raise ConfigError(
            f"Ulysses sequence parallel size {sp} needs flash attention, but {ATTENTION_KEY}="
            f"{impl} (veRL splits sequences across GPUs only inside flash attention): set "
            "actor_rollout_ref.actor.ulysses_sequence_parallel_size=1, or "
            f"{ATTENTION_KEY}=flash_attention_2 where flash-attn is installed."
        )
    if loads_here and impl in FLASH_ATTENTION:
        try:
            metadata.distribution(FLASH_ATTENTION[impl])
        except metadata.PackageNotFoundError:
            raise ConfigError(
                f"{ATTENTION_KEY}={impl} needs the {FLASH_ATTENTION[impl]} package, which "
                f'is not installed here: install it (docs/gpu.md "Attention"), or set '
                f"{ATTENTION_KEY}=sdpa actor_rollout_ref.actor.ulysses_sequence_parallel_size=1."
            ) from None


def to_yaml(config: DictConfig) -> str:
    return OmegaConf.to_yaml(config, resolve=False)
