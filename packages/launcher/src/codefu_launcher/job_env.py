"""Every host's environment in a job, and the command the job runs.

NCCL over EFA settings by instance type, the launcher's own settings, the user's entries
(their names listed in CODEFU_PASS_ENV, so the launcher passes each on) and the names of
the secret parameters the hosts read. Submission adds where the hosts read the Ray auth
secret (`codefu_launcher.auth.store_job_secret`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from codefu_launcher.auth import SECRET_PARAMETERS_ENV, encode_secret_parameters
from codefu_launcher.instances import gpus_for_instance_type
from codefu_launcher.pass_env import PASS_ENV_ENV
from codefu_launcher.spec import JobSpec, groups_of

# NCCL over EFA on the GPU instance types the project targets (aws-ofi-nccl in the image).
_EFA_COMMON = {
    "FI_PROVIDER": "efa",
    "FI_EFA_USE_DEVICE_RDMA": "1",
    "FI_EFA_FORK_SAFE": "1",  # Ray and vLLM fork worker processes
    "NCCL_SOCKET_IFNAME": "^lo,docker0",
    "NCCL_DEBUG": "WARN",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
}
_EFA_BY_FAMILY: dict[str, dict[str, str]] = {
    "ml.p4d.": _EFA_COMMON,
    "ml.p4de.": _EFA_COMMON,
    "ml.p5.": {**_EFA_COMMON, "FI_EFA_SET_CUDA_SYNC_MEMOPS": "0"},
    "ml.p5e.": {**_EFA_COMMON, "FI_EFA_SET_CUDA_SYNC_MEMOPS": "0"},
    "ml.p5en.": {**_EFA_COMMON, "FI_EFA_SET_CUDA_SYNC_MEMOPS": "0"},
}


def nccl_environment(instance_types: list[str]) -> dict[str, str]:
    """NCCL/EFA variables for the job's GPU instance types (empty for other types)."""
    env: dict[str, str] = {}
    for itype in instance_types:
        for prefix, values in _EFA_BY_FAMILY.items():
            if itype.startswith(prefix):
                env.update(values)
    return env


def launcher_command(head_instance_group: str | None, launcher_args: Sequence[str] = ()) -> str:
    """The job's command: the launcher, whose arguments after `--` are the entrypoint.

    The SDK's driver script runs the command with `eval` in a bash that does not forward
    SIGTERM; `exec` replaces that bash with the launcher, so stopping the job reaches it
    and its exit code is the container's.
    """
    parts = ["exec", "codefu-launcher", "run"]
    if head_instance_group:
        parts += ["--head-instance-group", shlex.quote(head_instance_group)]
    parts += [shlex.quote(a) for a in launcher_args]
    return " ".join([*parts, "--"])


def job_environment(spec: JobSpec) -> dict[str, str]:
    """Environment of every host: NCCL/EFA defaults, launcher settings, the user's entries.

    The names of the user's entries go into CODEFU_PASS_ENV, so the launcher hands every
    one of them to Ray and the entrypoint. Submission adds where the hosts read the Ray
    auth secret (`auth.store_job_secret`).
    """
    types = [g.instance_type for g in groups_of(spec)]
    gpu_types = [t for t in types if (gpus_for_instance_type(t) or 0) > 0]
    env = nccl_environment(gpu_types)
    if spec.head_instance_group:
        env["CODEFU_HEAD_INSTANCE_GROUP"] = spec.head_instance_group
    env.update(spec.environment)
    if spec.environment:
        env[PASS_ENV_ENV] = ",".join(sorted(spec.environment))
    if spec.secret_parameters:
        env[SECRET_PARAMETERS_ENV] = encode_secret_parameters(spec.secret_parameters)
    return env
