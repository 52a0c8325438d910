"""SageMaker instance types and their GPUs: the one table (pure).

The launcher reads the GPU count (which instance groups are CPU-only judge hosts, NCCL
settings); the trainer's GPU memory plan reads the GPU and its memory
(`codefu_trainer.training.clusters.sagemaker`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class InstanceGpus:
    """The GPUs of one SageMaker instance type."""

    count: int
    # The GPU as torch names it, and its memory in GiB as torch reports it (nvidia-smi's
    # total less the driver's reserve); None where not measured.
    name: str | None = None
    memory_gib: float | None = None


A100_40 = ("A100-SXM4-40GB", 39.39)
A100_80 = ("A100-SXM4-80GB", 79.15)
H100 = ("H100 80GB HBM3", 79.11)
H200 = ("H200", 139.8)
A10G = ("A10G", 21.99)
L40S = ("L40S", 44.39)

INSTANCE_TYPES: dict[str, InstanceGpus] = {
    "ml.p3.2xlarge": InstanceGpus(1),
    "ml.p3.8xlarge": InstanceGpus(4),
    "ml.p3.16xlarge": InstanceGpus(8),
    "ml.p3dn.24xlarge": InstanceGpus(8),
    "ml.p4d.24xlarge": InstanceGpus(8, *A100_40),
    "ml.p4de.24xlarge": InstanceGpus(8, *A100_80),
    "ml.p5.48xlarge": InstanceGpus(8, *H100),
    "ml.p5e.48xlarge": InstanceGpus(8, *H200),
    "ml.p5en.48xlarge": InstanceGpus(8, *H200),
    "ml.p6-b200.48xlarge": InstanceGpus(8),
    "ml.g5.12xlarge": InstanceGpus(4, *A10G),
    "ml.g5.24xlarge": InstanceGpus(4, *A10G),
    "ml.g5.48xlarge": InstanceGpus(8, *A10G),
    "ml.g6.12xlarge": InstanceGpus(4),
    "ml.g6.24xlarge": InstanceGpus(4),
    "ml.g6.48xlarge": InstanceGpus(8),
    "ml.g6e.12xlarge": InstanceGpus(4, *L40S),
    "ml.g6e.24xlarge": InstanceGpus(4, *L40S),
    "ml.g6e.48xlarge": InstanceGpus(8, *L40S),
}
# Families whose other sizes have one GPU, and CPU-only families.
_ONE_GPU_FAMILIES = ("ml.g4dn.", "ml.g5.", "ml.g6.", "ml.g6e.")
_CPU_FAMILIES = re.compile(r"^ml\.(c|m|r|t|x|z)\d")


def gpus_for_instance_type(instance_type: str) -> int | None:
    """GPUs on a SageMaker instance type; None when the type is unknown here."""
    if instance_type in INSTANCE_TYPES:
        return INSTANCE_TYPES[instance_type].count
    if instance_type.startswith(_ONE_GPU_FAMILIES):
        return 1
    if _CPU_FAMILIES.match(instance_type) or instance_type == "local":
        return 0
    return None
