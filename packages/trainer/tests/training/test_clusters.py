"""The cluster kinds: one registered per `cluster.kind`, each with what the preflight reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from codefu_launcher.instances import INSTANCE_TYPES, gpus_for_instance_type
from codefu_trainer.run.compose import PrerequisiteError
from codefu_trainer.run.config import ClusterKind
from codefu_trainer.run.overrides import split_overrides
from codefu_trainer.training.clusters.local import require_model_folder
from codefu_trainer.training.clusters.registry import CLUSTERS, cluster_of, train_config

from ..conftest import CONF


def test_every_cluster_kind_has_its_module_registered() -> None:
    assert set(CLUSTERS) == set(ClusterKind)
    for kind, cluster in CLUSTERS.items():
        assert cluster.kind is kind


def test_a_sagemaker_run_plans_for_its_instance_types_gpu_from_the_one_table() -> None:
    def gpu(*overrides: str) -> object:
        cfg = train_config(CONF, split_overrides(overrides)[0])
        return cluster_of(cfg).gpu(cfg)

    p4de = INSTANCE_TYPES["ml.p4de.24xlarge"]
    assert gpu("cluster=sagemaker_p4de") == (p4de.name, p4de.memory_gib, 8)
    assert gpus_for_instance_type("ml.p4de.24xlarge") == p4de.count == 8  # the launcher's view
    unknown = gpu("cluster=sagemaker_p4de", "cluster.sagemaker.instance_type=ml.p3.16xlarge")
    assert isinstance(unknown, str) and "ml.p3.16xlarge is not known here" in unknown
    # Configured memory: the count still comes from the table.
    assert gpu(
        "cluster=sagemaker_p4de",
        "cluster.sagemaker.instance_type=ml.p3.16xlarge",
        "cluster.gpu_memory_gib=15.8",
    ) == ("ml.p3.16xlarge", 15.8, 8)


def test_a_local_run_refuses_a_model_folder_that_is_not_here(tmp_path: Path) -> None:
    """Before veRL is imported: a model.path naming a folder must be one here; a hub id or
    an s3:// prefix is veRL's to load."""

    def check(path: str) -> None:
        cfg = train_config(CONF, split_overrides(["cluster=local", f"model.path='{path}'"])[0])
        require_model_folder(cfg)

    for missing in ("/nonexistent/model", "./runs/typo/model", "~/no/such/model"):
        with pytest.raises(PrerequisiteError, match="no such model directory here"):
            check(missing)
    check(str(tmp_path))
    check("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B")
    check("s3://bucket/models/7b/")
