"""The veRL-on-CPU extensions and patches (codefu_trainer.training.verl.cpu), piece by piece."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import subprocess
import sys

import pytest

from codefu_trainer.training.verl.cpu import patches


def test_every_patched_verl_line_still_reads_as_expected() -> None:
    # Fails when a veRL upgrade changes a line a patch works around: revisit that patch.
    assert patches.check() == []


def test_the_anchor_check_reports_a_changed_line() -> None:
    patch = patches.PATCHES[0]
    moved = dataclasses.replace(
        patch, anchors=(patches.Anchor(patch.anchors[0].path, patch.anchors[0].line + 1, "x()"),)
    )
    (wrong,) = patches.check([moved])
    assert patch.name in wrong and f":{patch.anchors[0].line + 1}" in wrong


def test_every_patch_says_what_it_does_on_a_gpu_machine() -> None:
    assert {p.kind for p in patches.PATCHES} == {"extension", "patch"}
    for p in patches.PATCHES:
        assert p.why and p.on_gpu and p.anchors


PROBE = r"""
import json, os, sys
from codefu_trainer.training.verl.cpu.hook import setup
setup()
from verl.utils.device import get_device_name
import verl.utils.distributed as dist
import verl.workers.engine_workers as ew
from verl.workers.engine import EngineRegistry
from verl.workers.engine.fsdp import transformer_impl as ti
from verl.workers.rollout.base import _ROLLOUT_REGISTRY
from verl.workers.rollout.replica import get_rollout_replica_class
print(json.dumps({
    "device": get_device_name(),
    "engine_workers_init_patched": getattr(
        ew.initialize_global_process_group_ray, "_codefu_cpu", False),
    "same_function": (
        ew.initialize_global_process_group_ray is dist.initialize_global_process_group_ray),
    "pin_memory": ti.CPUOffloadPolicy(pin_memory=True).pin_memory,
    "adapter": _ROLLOUT_REGISTRY.get(("hf", "async")),
    "replica": get_rollout_replica_class("hf").__name__,
    "cpu_engine": "cpu" in str(EngineRegistry._engines["language_model"]["fsdp2"]),
}))
"""


def _probe(platform: str) -> dict:
    env = {**os.environ, "VERL_PLATFORM": platform}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_hook_patches_veRL_as_it_is_imported() -> None:
    got = _probe("cpu")
    assert got["device"] == "cpu"
    # engine_workers imported the name after the patch: it holds the patched function.
    assert got["engine_workers_init_patched"] and got["same_function"]
    assert got["pin_memory"] is False
    assert got["adapter"] == patches.ROLLOUT_ADAPTER
    assert got["replica"] == "HFReplica"
    assert got["cpu_engine"]


@pytest.mark.slow
def test_on_a_gpu_platform_the_patches_keep_veRL_behaviour() -> None:
    got = _probe("nvidia")  # what veRL picks on a GPU machine
    assert got["device"] == "cuda"
    assert got["pin_memory"] is True  # veRL's pinned offload of the reference, unchanged


def test_rollout_log_probs_are_those_of_the_temperature_scaled_logits() -> None:
    import torch

    from codefu_trainer.training.verl.cpu.rollout import token_log_probs

    logits = torch.randn(2, 3, 11)
    tokens = torch.randint(0, 11, (2, 3))
    for t in (0.7, 1.0):
        want = torch.log_softmax(logits / t, -1).gather(-1, tokens[..., None])[..., 0]
        assert torch.allclose(token_log_probs(logits, tokens, t), want)
    greedy = torch.log_softmax(logits, -1).gather(-1, tokens[..., None])[..., 0]
    assert torch.allclose(token_log_probs(logits, tokens, 0.0), greedy)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from verl.workers.config import HFModelConfig, RolloutConfig

    from codefu_trainer.run.config import TinyModelConfig
    from codefu_trainer.training.rehearsal.tiny_model import write_tiny_model
    from codefu_trainer.training.verl.cpu.rollout import HFServer

    shape = TinyModelConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1,
    )  # fmt: skip
    model = write_tiny_model(shape, tmp_path_factory.mktemp("hf") / "model")
    config = RolloutConfig(name="hf", prompt_length=32, response_length=12)
    return HFServer(config, HFModelConfig(path=str(model)), replica_rank=0)


def _generate(server, prompts: list[list[int]], temperature: float = 1.0) -> list:  # type: ignore[no-untyped-def]
    params = {"temperature": temperature, "top_p": 1.0, "top_k": -1, "logprobs": True}

    async def run() -> list:
        return list(
            await asyncio.gather(
                *(server.generate(p, dict(params), f"r{i}") for i, p in enumerate(prompts))
            )
        )

    return asyncio.run(run())


def test_server_batches_requests_and_reports_the_policy_log_probs(server) -> None:  # type: ignore[no-untyped-def]
    import torch

    prompts = [[5, 6, 7], [8], [9, 10, 11, 12, 13]]
    outs = _generate(server, prompts, temperature=0.7)
    for prompt, out in zip(prompts, outs, strict=True):
        assert 0 < len(out.token_ids) <= 12 and len(out.log_probs) == len(out.token_ids)
        # Recompute without padding: the log-probs are the model's at temperature 0.7.
        ids = torch.tensor([prompt + out.token_ids])
        with torch.no_grad():
            logits = server.model(ids).logits[0, len(prompt) - 1 : -1]
        want = torch.log_softmax(logits / 0.7, -1).gather(-1, ids[0, len(prompt) :, None])[:, 0]
        assert torch.allclose(torch.tensor(out.log_probs), want, atol=1e-4)


def test_requests_arriving_over_a_while_are_generated_as_one_batch(server, capsys) -> None:  # type: ignore[no-untyped-def]
    """veRL's agent loop sends a step's requests one Ray call each: they arrive spread out.
    Each arriving before the batch has been quiet for BATCH_QUIET_S joins it (a 50 ms window
    once split them into several `generate` calls, each as long as the whole batch's)."""
    from codefu_trainer.training.verl.cpu.rollout import BATCH_QUIET_S

    params = {"temperature": 1.0, "top_p": 1.0, "top_k": -1}

    async def staggered() -> list:
        tasks = []
        for i in range(3):
            tasks.append(asyncio.create_task(server.generate([5 + i, 6], dict(params), f"s{i}")))
            await asyncio.sleep(BATCH_QUIET_S / 2)
        return list(await asyncio.gather(*tasks))

    capsys.readouterr()
    assert len(asyncio.run(staggered())) == 3
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("hf rollout:")]
    assert len(lines) == 1 and lines[0].startswith("hf rollout: 3 requests, "), lines
    assert " ms a token) on cpu" in lines[0]


def test_weight_updates_change_generation_and_tag_the_step(server) -> None:  # type: ignore[no-untyped-def]
    import torch

    state = {k: v.detach().clone() for k, v in server.model.state_dict().items()}
    before = _generate(server, [[5, 6, 7]], temperature=0.0)[0]
    bias = {k: v + 0.5 * torch.randn_like(v) for k, v in state.items() if k.endswith("weight")}
    assert asyncio.run(server.update_weights(bias, global_steps=7)) == len(bias)
    after = _generate(server, [[5, 6, 7]], temperature=0.0)[0]
    assert after.extra_fields["global_steps"] == 7
    assert (after.token_ids, after.log_probs) != (before.token_ids, before.log_probs)
    with pytest.raises(KeyError, match="does not have"):
        asyncio.run(server.update_weights({"no.such.weight": torch.zeros(1)}, global_steps=8))
    asyncio.run(server.update_weights(state, global_steps=None))  # restore for other tests


def test_veRL_resuming_the_weights_wakes_the_server(server) -> None:  # type: ignore[no-untyped-def]
    """veRL 0.9.1 puts the replicas to sleep (the server's model to the CPU on a GPU machine)
    and wakes the weights through the adapter's `resume(tags=["weights"])` before a weight
    sync: the adapter must call the server's `wake_up` then, and only then."""
    from codefu_trainer.training.verl.cpu.rollout import HFRollout

    calls: list[str] = []

    class Method:  # a Ray actor method's `.remote()`, run in this process
        def __init__(self, fn) -> None:  # type: ignore[no-untyped-def]
            self.fn = fn

        def remote(self):  # type: ignore[no-untyped-def]
            calls.append(self.fn.__name__)
            return self.fn()

    class Handle:
        wake_up = Method(server.wake_up)
        sleep = Method(server.sleep)

    adapter = HFRollout.__new__(HFRollout)
    adapter._server = Handle()
    asyncio.run(adapter.resume(tags=["kv_cache"]))
    assert calls == []
    asyncio.run(adapter.resume(tags=["weights"]))
    assert calls == ["wake_up"] and server.model.device == server.device


def test_server_answers_every_request_from_each_event_loop_during_weight_updates(  # type: ignore[no-untyped-def]
    server, monkeypatch, caplog
) -> None:
    """A request is answered whichever event loop sends it, also while weights load.

    The server once kept an asyncio.Event and Lock made in its constructor: they bound to the
    first loop that waited on them, and in any later loop its batching task died on "bound to
    a different event loop" (the "Task exception was never retrieved" traceback after the
    suite) with the batch it had taken, whose callers then waited forever.
    """
    import gc
    import threading

    from codefu_trainer.training.verl.cpu.rollout import BATCH_QUIET_S

    state = {k: v.detach().clone() for k, v in server.model.state_dict().items()}
    gate = threading.Event()  # holds the weight update (inside its load) until the batch waits
    state_dict = server.model.state_dict

    def gated_state_dict(*args, **kwargs):  # type: ignore[no-untyped-def]
        gate.wait()
        return state_dict(*args, **kwargs)

    monkeypatch.setattr(server.model, "state_dict", gated_state_dict)
    params = {"temperature": 0.7, "top_p": 1.0, "top_k": -1}

    async def generate_during_an_update() -> list[int]:
        gate.clear()
        update = asyncio.create_task(server.update_weights(state, global_steps=None))
        answer = asyncio.create_task(server.generate([5, 6, 7], dict(params), "r"))
        # The batch is taken after BATCH_QUIET_S, while the update still loads.
        asyncio.get_running_loop().call_later(BATCH_QUIET_S + 0.3, gate.set)
        await update
        # A guard against hanging, not a timing check: the answer takes well under a second.
        out = await asyncio.wait_for(answer, timeout=60)
        return list(out.token_ids)

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        for _ in range(3):  # each asyncio.run is a new event loop
            assert asyncio.run(generate_during_an_update())
        gc.collect()
    assert not [r for r in caplog.records if r.name == "asyncio"], caplog.text


def test_cluster_cpu_verl_composes_veRL_for_the_cpu(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from codefu_trainer.training.clusters.registry import compose_run as compose
    from codefu_trainer.training.verl.cpu.hook import HOOK

    from ..conftest import CONF

    run = compose(
        CONF, ["cluster=cpu_verl", f"run.dir={tmp_path / 'run'}", "rehearsal.steps=5"]
    )  # veRL's own validation runs here too
    verl = run.verl
    assert verl is not None
    assert verl.actor_rollout_ref.rollout.name == patches.ROLLOUT_NAME
    assert verl.actor_rollout_ref.actor.strategy == verl.actor_rollout_ref.ref.strategy == "fsdp2"
    init = verl.ray_kwargs.ray_init
    assert init.runtime_env.worker_process_setup_hook == HOOK
    assert init.runtime_env.env_vars.VERL_PLATFORM == "cpu"
    assert init.address == "local"
    assert verl.actor_rollout_ref.model.path == str(tmp_path / "run" / "base_model")
    assert verl.data.train_files == [str(tmp_path / "run" / "data" / "easy" / "train.parquet")]
    assert verl.trainer.total_training_steps == 5
    reward = verl.reward.custom_reward_function.reward_kwargs.reward_config
    assert reward["worker"]["num_workers"] == 2  # not one judge per logical Ray CPU
