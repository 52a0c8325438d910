"""veRL 0.9.1's own model building and actor update, on CPU, from our `cluster=local` config.

How far veRL goes on a CPU (what stops `main_ppo` is in docs/limitations.md): its
reference and actor workers build the model from our composed config (the code that raises
transformers' ImportError for flash_attention_2 without flash-attn), the actor's FSDP2
engine computes log-probs and takes one GRPO update on responses our judge scored. The
reference's FSDP2 wrap stops at pinned CPU-offload memory, which needs an accelerator.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codefu_trainer.run.config import TinyModelConfig
from codefu_trainer.training.rehearsal.tiny_model import write_tiny_model

from ..conftest import APLUSB_OK, CONF, _problem

STEP = Path(__file__).with_name("verl_cpu_step.py")
# Two prompts, two responses each (one GRPO group per prompt).
RESPONSES = [
    APLUSB_OK,  # AC → 1.0
    "I am not sure how to solve this.",  # no code → -1.0
    "<code>\nint main( {\n</code>",  # compile error → -0.5
    APLUSB_OK.replace("a + b", "a - b"),  # wrong answer on every test → 0.0
]
# One process, no rollout engine. fp32 compute instead of bf16 (faster on a CPU, and exact
# enough to compare log-probs closely); a learning rate at which one step shows.
OVERRIDES = [
    "cluster=local",
    "verl.data.train_batch_size=2",
    "actor_rollout_ref.rollout.n=2",
    "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
    "actor_rollout_ref.actor.ppo_mini_batch_size=2",
    "actor_rollout_ref.actor.use_torch_compile=false",
    "actor_rollout_ref.ref.use_torch_compile=false",
    "+actor_rollout_ref.actor.fsdp_config.mixed_precision={param_dtype:fp32}",
    "actor_rollout_ref.actor.optim.lr=1e-3",
]


@pytest.fixture(scope="module")
def step(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("verl_cpu")
    # head_dim 32: the smallest some attention kernels take.
    shape = TinyModelConfig(hidden_size=64, num_attention_heads=2, num_key_value_heads=1)
    model = write_tiny_model(shape, tmp / "model")
    problems = [_problem(0, "train"), _problem(1, "train")]
    spec = {
        "conf_dir": str(CONF),
        "model_dir": str(model),
        "overrides": [*OVERRIDES, f"model.path={model}", f"run.dir={tmp / 'run'}"],
        "prompts": [p["prompt"] for p in problems],
        "ground_truths": [p["reward_model"]["ground_truth"] for p in problems],
        "responses": RESPONSES,
    }
    (tmp / "spec.json").write_text(json.dumps(spec))
    env = {**os.environ, "RAY_TMPDIR": os.environ.get("RAY_TMPDIR", "/tmp")}
    done = subprocess.run(
        [sys.executable, str(STEP), str(tmp / "spec.json"), str(tmp / "out.json")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads((tmp / "out.json").read_text())


pytestmark = [pytest.mark.slow, pytest.mark.ray]


def test_actor_and_reference_are_built_with_the_configured_attention(step: dict) -> None:
    assert step["configured_attention"] == "sdpa"
    assert step["actor_attention"] == "sdpa"
    assert step["ref_attention"] == "sdpa"


def test_flash_attention_2_fails_in_verl_model_building_where_flash_attn_is_absent(
    step: dict,
) -> None:
    # What `codefu-train --check` refuses up front (test_train_cli).
    assert step["flash_attention_2_error"].startswith("ImportError")
    assert "FlashAttention2" in step["flash_attention_2_error"]


def test_the_reference_fsdp2_wrap_needs_an_accelerator(step: dict) -> None:
    # veRL forces pinned CPU offload for the forward-only reference.
    assert "accelerator" in step["ref_init_error"]


def test_rewards_come_from_the_judge_and_advantages_from_grpo(step: dict) -> None:
    assert step["verdicts"] == ["AC", "NO_CODE", "CE", "WA"]
    assert step["scores"] == [1.0, -1.0, -0.5, 0.0]
    first, second, third, fourth = step["advantages"]
    # Normalised within each group: the better response of each pair gets +, the other -.
    assert first > 0 > second and fourth > 0 > third
    assert first == pytest.approx(-second) and fourth == pytest.approx(-third)


def test_remove_padding_gives_the_padded_log_probs_under_sdpa(step: dict) -> None:
    # Packed sequences attend only within themselves (transformers' packed-sequence mask
    # from position_ids); attending across the packed neighbours moves this model's
    # log-probs by about 0.1. The spread shows the sequences' log-probs differ at all.
    assert step["remove_padding_vs_padded_max_diff"] < 1e-3
    assert step["log_prob_spread"] > 1.0


def test_one_actor_update_moves_the_policy_toward_the_advantages(step: dict) -> None:
    metrics = step["metrics"]
    assert metrics["grad_norm"] > 0
    assert {"actor/pg_loss", "actor/ppo_kl", "actor/pg_clipfrac", "kl_loss"} <= metrics.keys()
    change, adv = step["log_prob_change"], step["advantages"]
    # First-order improvement of the policy-gradient objective sum(A_i * log p_i).
    assert sum(a * c for a, c in zip(adv, change, strict=True)) > 0
    positive = [c for a, c in zip(adv, change, strict=True) if a > 0]
    negative = [c for a, c in zip(adv, change, strict=True) if a < 0]
    assert min(positive) > max(negative)
