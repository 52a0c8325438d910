"""The cluster kinds: one module and one registration each (the test-only kind below is
registered, composed, started by codefu-train, read by evaluation, then gone), each with its
facts and what the preflight reads."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from omegaconf import DictConfig

from codefu_launcher.instances import INSTANCE_TYPES, gpus_for_instance_type
from codefu_trainer.evaluation.config import compose_eval
from codefu_trainer.evaluation.generation import choose_backend
from codefu_trainer.run.cluster_kinds import CLUSTER_KINDS, ClusterSettings
from codefu_trainer.run.compose import PrerequisiteError
from codefu_trainer.run.config import ClusterConfig, TrainConfig
from codefu_trainer.run.overrides import ConfigError, split_overrides
from codefu_trainer.training.cli import main
from codefu_trainer.training.clusters.base import Cluster, Launch
from codefu_trainer.training.clusters.local import require_model_folder
from codefu_trainer.training.clusters.registry import cluster_of, train_config

from ..conftest import CONF


def test_every_cluster_kind_has_its_module_registered() -> None:
    assert len(CLUSTER_KINDS) > 0
    for name, kind in CLUSTER_KINDS.items():
        assert isinstance(kind, Cluster) and kind.name == name
        assert kind.runs_here or not kind.uses_gpus_here  # GPUs here only for a run here
    kinds = {kind for p in (CONF / "cluster").glob("*.yaml") for kind in _kinds(p)}
    assert kinds == set(CLUSTER_KINDS)  # every kind has a cluster, every cluster a kind


def _kinds(path: Path) -> list[str]:
    return [
        line.split(":")[1].strip()
        for line in path.read_text().splitlines()
        if line.startswith("kind:")
    ]


# ---------------------------------------------------------------- a test-only kind


@dataclass
class InlineSettings:
    greeting: str = "hi"


@dataclass
class InlineClusterConfig(ClusterConfig):
    """A cluster of the test-only kind: its own settings, `cluster.inline.*`."""

    inline: InlineSettings = field(default_factory=InlineSettings)


class Inline(Cluster):
    """A kind only this test knows: it runs here, on no GPU, has settings of its own,
    imports nothing for its run, and its start records what it was given."""

    name = "inline"
    uses_gpus_here = False
    settings = ClusterSettings("inline", InlineClusterConfig, "test_inline_cluster_schema")
    distributions = ()

    def __init__(self) -> None:
        self.started: list[str] = []

    def check_verl(self, verl: DictConfig) -> None:
        """None: it never runs veRL."""

    def start(self, cfg: TrainConfig, launch: Launch) -> int:
        assert isinstance(cfg.cluster, InlineClusterConfig)
        self.started.append(cfg.cluster.inline.greeting)
        return 0


@pytest.fixture
def inline(tmp_path: Path) -> Iterator[tuple[Inline, Path]]:
    """The kind registered (one registration) with its conf/ line, a cluster of it."""
    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    (conf / "cluster" / "inline.yaml").write_text(
        "defaults:\n  - test_inline_cluster_schema\n  - _self_\n"
        "name: inline\nkind: inline\ngpus_per_node: 0\ninline:\n  greeting: hello\n"
    )
    kind = CLUSTER_KINDS.register(Inline())
    assert isinstance(kind, Inline)
    try:
        yield kind, conf
    finally:
        CLUSTER_KINDS.unregister(kind.name)
    assert kind.name not in CLUSTER_KINDS


def test_a_registered_kind_trains_is_evaluated_and_keeps_its_settings(
    inline: tuple[Inline, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kind, conf = inline
    out = ["--config-dir", str(conf), f"data.out_dir={tmp_path / 'none'}"]
    assert main([*out, "cluster=inline"]) == 0
    assert main([*out, "cluster=inline", "cluster.inline.greeting=hey"]) == 0
    assert kind.started == ["hello", "hey"]
    # Its settings on another kind's cluster are refused, naming the clusters that have them.
    assert main([*out, "cluster=local", "cluster.inline.greeting=x"]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "cluster.inline.* are the settings of cluster kind inline" in line
    assert "Choose one of: cluster=inline." in line
    # Evaluation reads its facts through the registry: it runs here, on no GPU.
    cfg = compose_eval(conf, ["cluster=inline"])
    assert choose_backend(cfg, gpus=1).device == "cpu"


def test_an_unregistered_kind_is_refused_naming_the_kinds(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    (conf / "cluster" / "inline.yaml").write_text("name: inline\nkind: inline\n")
    with pytest.raises(ConfigError, match=r"unknown cluster kind 'inline': choose one of cpu"):
        train_config(conf, split_overrides(["cluster=inline"])[0])


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
