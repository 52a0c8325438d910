"""What Ray and the entrypoint see of the job's environment: an allow-list, never the secret."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from codefu_launcher.auth import AUTH_SECRET_ENV

PASS_ENV_ENV = "CODEFU_PASS_ENV"  # extra variable names for the entrypoint, comma separated

# The entrypoint's environment: these names and prefixes, nothing else (never the secret).
PASS_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LC_ALL",
        "TZ",
        "TERM",
        "TMPDIR",
        "HOSTNAME",
        "PYTHONPATH",
        "PYTHONUNBUFFERED",
        "PYTHONHASHSEED",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "OMP_NUM_THREADS",
        "TRAINING_JOB_NAME",
        "TRAINING_JOB_ARN",
    }
)
PASS_PREFIXES = (
    "SM_",
    "CODEFU_",
    "NCCL_",
    "FI_",
    "CUDA_",
    "NVIDIA_",
    "HF_",
    "TRANSFORMERS_",
    "TOKENIZERS_",
    "VLLM_",
    "TORCH_",
    "PYTORCH_",
    "WANDB_",
    "MLFLOW_",
    "AWS_",
    "RAY_",  # Ray's own settings (RAY_DEDUP_LOGS, RAY_GRAFANA_*, ...); never its auth
    "OFI_NCCL_",
    "GLOO_",
    "RDMAV_",
    "TRITON_",
    "TORCHINDUCTOR_",
    "OMP_",
    "MKL_",
    "KMP_",
    "XDG_",
)
# The launcher sets these itself; a value from the job is never passed on.
NEVER_PASS = frozenset({AUTH_SECRET_ENV, "RAY_AUTH_TOKEN", "RAY_AUTH_MODE", "RAY_ADDRESS"})


def minimal_environment(env: Mapping[str, str], extra: Sequence[str] = ()) -> dict[str, str]:
    """The allow-listed subset of `env` (names, prefixes, plus `extra` and CODEFU_PASS_ENV).

    A submitted job's CODEFU_PASS_ENV lists every name the user set in its environment,
    so all of them pass.
    """
    wanted = set(PASS_NAMES) | set(extra) | pass_env_names(env)
    return {
        k: v
        for k, v in env.items()
        if k not in NEVER_PASS and (k in wanted or k.startswith(PASS_PREFIXES))
    }


def pass_env_names(env: Mapping[str, str]) -> set[str]:
    """The names listed in CODEFU_PASS_ENV (comma separated)."""
    return {n.strip() for n in env.get(PASS_ENV_ENV, "").split(",") if n.strip()}


def withheld_names(env: Mapping[str, str], passed: Mapping[str, str]) -> list[str]:
    """Names of `env` that are not passed on, for the log (values never appear)."""
    return sorted(k for k in env if k not in passed)
