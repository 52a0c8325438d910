"""A two-rank run whose checkpoint shards live on two hosts ends with its model and resumes.

veRL's FSDP actor on two CPU ranks (gloo) saves step 1, each rank into its own directory,
as the ranks of a two-instance SageMaker job do (two_host_checkpoint.py). veRL's merger on
the head's directory alone fails, as the issue describes; `export_final_model` gathers
the other host's shard through a Ray task pinned to a node and writes the model to
SM_MODEL_DIR. The checkpoint callback's manifests are written on each host after the save;
a step whose copy on one host is torn (a shard cut short) is refused by the export with the
report. Then both hosts restore the union of their files (SageMaker's restore of one S3
prefix) with a later step that is torn on one host only: both resume from step 1.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from codefu_trainer.run.config import TinyModelConfig, final_model_dir
from codefu_trainer.training.checkpoints import export
from codefu_trainer.training.checkpoints.export import (
    LocalHost,
    RayNodeHost,
    export_final_model,
    ray_hosts,
)
from codefu_trainer.training.checkpoints.hosts import (
    TRACKER,
    CheckpointError,
    commit_step,
    on_every_ray_node,
    prepare_resume_everywhere,
)
from codefu_trainer.training.checkpoints.manifest import list_files
from codefu_trainer.training.rehearsal.tiny_model import write_tiny_model

from ..conftest import CONF, own_ray_cluster

HELPER = Path(__file__).with_name("two_host_checkpoint.py")
STEP1 = "global_step_1/actor"
pytestmark = [pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _phase(phase: str, spec: dict, spec_path: Path) -> None:
    spec_path.write_text(json.dumps({**spec, "port": _free_port()}))
    done = subprocess.run(
        [sys.executable, str(HELPER), phase, str(spec_path)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        cwd=HELPER.parent,
    )
    assert done.returncode == 0, done.stderr[-4000:]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("two_hosts")
    shape = TinyModelConfig(hidden_size=64, num_attention_heads=2, num_key_value_heads=1)
    model = write_tiny_model(shape, tmp / "model")
    (tmp / "out").mkdir()
    spec = {
        "conf_dir": str(CONF),
        "overrides": [
            "trainer.nnodes=1",
            "trainer.n_gpus_per_node=2",
            "data.train_batch_size=2",
            "actor_rollout_ref.rollout.n=2",
            "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
            "actor_rollout_ref.actor.ppo_mini_batch_size=2",
            "actor_rollout_ref.actor.use_torch_compile=false",
            "+actor_rollout_ref.actor.fsdp_config.mixed_precision={param_dtype:fp32}",
            f"actor_rollout_ref.model.path={model}",
        ],
        "hosts": [str(tmp / "host0"), str(tmp / "host1")],
        "out": str(tmp / "out"),
    }
    _phase("save", spec, tmp / "save.json")
    for host in spec["hosts"]:  # what the checkpoint callback does after every rank's save
        commit_step(Path(host) / "checkpoints", 1)
    return {"tmp": tmp, "model": model, "spec": spec}


def _state(path: Path) -> dict:
    import torch

    return dict(torch.load(path, weights_only=False))


def test_each_host_holds_only_its_own_ranks_shards(saved: dict) -> None:
    host0, host1 = (Path(h) / "checkpoints" / STEP1 for h in saved["spec"]["hosts"])
    assert sorted(p.name for p in host0.glob("model_*.pt")) == ["model_world_size_2_rank_0.pt"]
    assert sorted(p.name for p in host1.glob("model_*.pt")) == ["model_world_size_2_rank_1.pt"]


def test_verl_merger_on_the_heads_directory_fails_for_the_other_hosts_shard(
    saved: dict, tmp_path: Path
) -> None:
    # What the final export ran on a two-instance job before export.py: veRL's merger on
    # the head's checkpoint directory alone.
    head = Path(saved["spec"]["hosts"][0]) / "checkpoints" / STEP1
    done = subprocess.run(
        [sys.executable, "-m", "verl.model_merger", "merge", "--backend", "fsdp",
         "--local_dir", str(head), "--target_dir", str(tmp_path / "model")],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "model_world_size_2_rank_1.pt" in done.stderr
    assert not (tmp_path / "model" / "config.json").exists()


@pytest.mark.ray
def test_the_final_model_gathers_both_hosts_shards_into_sm_model_dir(
    saved: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray
    import torch
    from transformers import AutoModelForCausalLM

    monkeypatch.setenv("SM_MODEL_DIR", str(tmp_path / "opt_ml_model"))
    monkeypatch.setattr(export, "CHUNK_BYTES", 64 * 1024)  # several chunks per shard
    head, other = (Path(h) / "checkpoints" for h in saved["spec"]["hosts"])
    out = final_model_dir(tmp_path / "run")
    assert out == tmp_path / "opt_ml_model"
    with own_ray_cluster(num_cpus=1):
        node = ray.get_runtime_context().get_node_id()
        # The other host's root, read only through Ray tasks pinned to a node.
        written = export_final_model(
            head, out, hosts=[LocalHost(head), RayNodeHost(node, other, name="host1")]
        )
        listings = on_every_ray_node(list_files, other)  # what PruneOnEveryNode runs on
    assert listings == [list_files(other)]
    assert written == out
    assert not head.with_name(head.name + ".export").exists()  # staging removed
    model = AutoModelForCausalLM.from_pretrained(out)
    merged = model.state_dict()
    expected = _state(Path(saved["spec"]["out"]) / "saved.pt")
    base = AutoModelForCausalLM.from_pretrained(saved["model"]).state_dict()
    assert set(merged) == set(expected)
    for key, value in expected.items():
        # veRL's merger writes bf16: the saved weights, rounded the same way.
        assert torch.equal(merged[key], value.to(torch.bfloat16)), key
        assert not torch.allclose(merged[key].float(), base[key].float(), atol=0.1), key
    assert (out / "tokenizer_config.json").is_file()


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def test_the_export_refuses_a_step_torn_on_one_host(saved: dict, tmp_path: Path) -> None:
    head, other = (Path(h) / "checkpoints" for h in saved["spec"]["hosts"])
    torn = tmp_path / "host1" / "checkpoints"
    shutil.copytree(other, torn)
    _cut(torn / STEP1 / "model_world_size_2_rank_1.pt")
    with pytest.raises(CheckpointError) as err:
        export_final_model(
            head, tmp_path / "model", hosts=[LocalHost(head), LocalHost(torn, name="host1")]
        )
    message = str(err.value)
    assert "global_step_1 is torn" in message
    assert f"{STEP1}/model_world_size_2_rank_1.pt: cut short" in message
    assert not (tmp_path / "model").exists()


def test_resume_from_both_hosts_when_one_hosts_copy_is_torn(
    saved: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch
    from omegaconf import OmegaConf

    tmp = saved["tmp"]
    uploaded = [Path(h) / "checkpoints" for h in saved["spec"]["hosts"]]
    restored = [tmp / "restored0", tmp / "restored1"]
    for root in restored:
        shutil.rmtree(root, ignore_errors=True)
        for source in uploaded:  # every instance gets the whole prefix
            shutil.copytree(source, root / "checkpoints", dirs_exist_ok=True)
        # A whole step 2 (step 1's files and manifests), the tracker naming it.
        ckpts = root / "checkpoints"
        shutil.copytree(ckpts / "global_step_1", ckpts / "global_step_2")
        (ckpts / TRACKER).write_text("2")
    # Host 1's restore of step 2 was interrupted: its copy of rank 1's shard is cut short.
    _cut(restored[1] / "checkpoints" / "global_step_2" / "actor" / "model_world_size_2_rank_1.pt")

    config = OmegaConf.create(
        {
            "trainer": {"default_local_dir": "checkpoints", "nnodes": 1, "n_gpus_per_node": 2},
            "actor_rollout_ref": {"actor": {}},
        }
    )
    plans = prepare_resume_everywhere(
        config,
        run_on=lambda fn, root, *args: [fn(r / "checkpoints", *args) for r in restored],
    )
    assert [(p.step, p.remove, p.tracker_was) for p in plans] == [(1, (2,), 2)] * 2
    log = capsys.readouterr().out
    assert "global_step_2/actor/model_world_size_2_rank_1.pt: cut short" in log
    assert "resuming from step 1 " in log
    for root in restored:
        assert (root / "checkpoints" / TRACKER).read_text() == "1"
        assert not (root / "checkpoints" / "global_step_2").exists()

    _phase("resume", {**saved["spec"], "hosts": [str(r) for r in restored]}, tmp / "resume.json")
    resumed = _state(Path(saved["spec"]["out"]) / "resumed.pt")
    expected = _state(Path(saved["spec"]["out"]) / "saved.pt")
    assert set(resumed) == set(expected)
    for key, value in expected.items():
        assert torch.equal(resumed[key], value), key


@pytest.mark.ray
def test_node_functions_reach_every_node_of_a_two_node_ray_cluster(tmp_path: Path) -> None:
    # What pruning and the resume decision run on; and the hosts the export reads.
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        cluster.wait_for_nodes()
        node_ids = on_every_ray_node(lambda: __import__("ray").get_runtime_context().get_node_id())
        alive = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
        hosts = ray_hosts(tmp_path)
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert sorted(node_ids) == sorted(alive) and len(alive) == 2
    assert [type(h).__name__ for h in hosts] == ["LocalHost", "RayNodeHost"]
