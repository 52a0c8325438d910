"""veRL 0.9.1's own trainer end to end on this machine's CPU (`codefu-train cluster=cpu_verl`).

Two `codefu-train` processes on the rehearsal's warm-started tiny model and the shipped
sample's problems, with our judge scoring every sample through veRL's reward loop:
2 GRPO steps with a checkpoint per step, then a second process that resumes from step 2
and runs step 3, then the final Hugging Face model export. Each process starts (and stops)
a Ray cluster of its own, in a private temp dir.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from ..conftest import CONF

pytestmark = [pytest.mark.slow, pytest.mark.ray]

# Messages veRL logs and carries on after: a run that logs them is broken.
SILENT_ERRORS = ("dtype mismatch", "Traceback (most recent call last)")


def _args(run_dir: Path, data: Path, steps: int, extra: Sequence[str] = ()) -> list[str]:
    """`codefu-train` arguments of these runs (`extra`: more overrides)."""
    return [
        "--config-dir",
        str(CONF),
        "cluster=cpu_verl",
        f"data.out_dir={data}",
        f"run.dir={run_dir}",
        f"rehearsal.steps={steps}",
        "rehearsal.prompts_per_step=1",
        "rehearsal.num_generations=4",
        "run.tracking.mlflow=false",
        "verl.data.shuffle=false",  # step k trains on problem k (mod 3): the data position
        f"trainer.rollout_data_dir={run_dir / 'rollouts'}",
        *extra,
    ]


def _train(run_dir: Path, data: Path, steps: int, extra: Sequence[str] = ()) -> str:
    """`codefu-train cluster=cpu_verl` in its own process (`_args`); its whole log."""
    args = _args(run_dir, data, steps, extra)
    ray_tmp = Path("/tmp") / f"codefu-verl-cpu-{os.getpid()}"  # Ray's socket paths are short
    env = {**os.environ, "RAY_TMPDIR": str(ray_tmp)}
    env.pop("RAY_ADDRESS", None)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "codefu_trainer.training.cli", *args],
            capture_output=True,
            text=True,
            timeout=840,
            env=env,
            check=False,
        )
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-6000:]
    return log


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Two steps from the warm-started base model (built once per machine: the rehearsal's
    cache), a checkpoint after each, the final model exported."""
    from codefu_data.config import DataConfig
    from codefu_data.prepare import prepare

    tmp = tmp_path_factory.mktemp("verl_cpu")
    data = prepare(
        DataConfig(source="sample", out_dir=str(tmp / "data")), progress=False, log=print
    ).out_dir
    run_dir = tmp / "run"
    log = _train(run_dir, data, steps=2)
    return {"run_dir": run_dir, "data": data, "log": log}


@pytest.fixture(scope="module")
def second(first: dict) -> dict:
    """A second process on the same run directory, to step 3: it resumes from step 2."""
    log = _train(first["run_dir"], first["data"], steps=3)
    return {**first, "first_log": first["log"], "log": log}


def _steps(log: str) -> list[dict[str, float]]:
    """veRL's console metrics, one dict per `step:N - key:value - ...` line."""
    out = []
    for line in log.splitlines():
        at = line.find("step:")
        if at < 0 or " - " not in line[at:]:
            continue
        fields = line[at:].split(" - ")
        record: dict[str, float] = {}
        for f in fields:
            key, _, value = f.partition(":")
            try:
                record[key.strip()] = float(value)
            except ValueError:
                continue
        if "step" in record and "critic/score/mean" in record:
            out.append(record)
    return out


def _rollouts(run_dir: Path, step: int) -> list[dict]:
    path = run_dir / "rollouts" / f"{step}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_two_steps_without_silent_errors(first: dict) -> None:
    for message in SILENT_ERRORS:
        assert message not in first["log"]
    assert [int(r["step"]) for r in _steps(first["log"])] == [1, 2]
    ckpts = first["run_dir"] / "checkpoints"
    assert {p.name for p in ckpts.glob("global_step_*")} >= {"global_step_1", "global_step_2"}


def test_the_exported_model_loads_and_differs_from_the_base_model(first: dict) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    run_dir = first["run_dir"]
    final = AutoModelForCausalLM.from_pretrained(run_dir / "model")
    base = AutoModelForCausalLM.from_pretrained(run_dir / "base_model")
    final_sd, base_sd = final.state_dict(), base.state_dict()
    assert final_sd.keys() == base_sd.keys()
    changed = [k for k in base_sd if not torch.equal(final_sd[k].float(), base_sd[k].float())]
    assert changed, "the exported model equals the base model"


def test_resume_continues_the_step_counter(second: dict) -> None:
    for message in SILENT_ERRORS:
        assert message not in second["log"]
    assert [int(r["step"]) for r in _steps(second["log"])] == [3]
    ckpts = second["run_dir"] / "checkpoints"
    assert "Resuming from " + str(ckpts / "global_step_2") in second["log"]
    assert {p.name for p in ckpts.glob("global_step_*")} == {f"global_step_{i}" for i in (1, 2, 3)}
    assert (ckpts / "latest_checkpointed_iteration.txt").read_text().strip() == "3"


def test_resume_continues_the_data_position(second: dict) -> None:
    problems = json.loads((second["run_dir"] / "data" / "easy" / "problems.json").read_text())
    assert len(problems) == 3
    for step in (1, 2, 3):  # unshuffled, one prompt per step: step k is problem k
        names = {r["gts"]["name"] for r in _rollouts(second["run_dir"], step)}
        assert names == {problems[step - 1]}, (step, names)


def test_the_judge_scores_every_sample_through_veRL_reward_loop(second: dict) -> None:
    from codefu_trainer.reward.config import RewardConfig, RewardMode
    from codefu_trainer.reward.service import RewardService

    samples = [r for step in (1, 2, 3) for r in _rollouts(second["run_dir"], step)]
    assert len(samples) == 3 * 4
    config = RewardConfig(mode=RewardMode.all_or_nothing)
    service = RewardService(config, local=True)  # the same judge, without Ray
    try:
        ours = service.score([s["output"] for s in samples], [s["gts"] for s in samples])
    finally:
        service.close()
    assert [s["score"] for s in samples] == pytest.approx([o["score"] for o in ours])
    # Real generation: the warm-started model writes programs the judge compiles and runs.
    verdicts = {o["verdict"] for o in ours}
    assert verdicts & {"AC", "WA", "RE", "TLE"}, verdicts


def test_weights_reach_the_rollout_and_the_policy_moves(second: dict) -> None:
    records = _steps(second["first_log"]) + _steps(second["log"])
    for r in records:
        # Rollout log-probs (hf_cpu server) equal the actor's: the weights were synced.
        assert r["training/rollout_probs_diff_max"] < 1e-4
    assert records[0]["actor/kl_loss"] == 0.0  # step 1: the actor is the reference
    assert records[-1]["actor/kl_loss"] > 0.0
    assert any(r["actor/grad_norm"] > 0 for r in records)
