"""veRL 0.9.1's own trainer end to end on this machine's CPU (`codefu-train cluster=cpu_verl`),
and what it does with torn checkpoints.

Two `codefu-train` processes on the rehearsal's warm-started tiny model and the shipped
sample's problems, with our judge scoring every sample through veRL's reward loop; each
starts (and stops) a Ray cluster of its own, in a private temp dir:

1. `killed`: 6 GRPO steps with a checkpoint per step, killed with SIGKILL (its whole
   process group) as soon as the directory of step 6 appears: veRL's save of step 6 under
   way or just returned, its manifest not yet written (checked; on this project's machine
   the kill lands after veRL's files and tracker).
2. `resumed`, on a copy of 1's run directory with four more faults, one per step: step 5's
   model shard cut to half its size, step 4's optimizer shard deleted, step 3's `data.pt`
   cut short, step 2's manifest deleted. The run reports each torn step (which file, what
   is wrong), resumes from step 1, the newest whole one, trains steps 2-6 again and exports
   the final Hugging Face model. The step counter, the data position, the judge's scores in
   veRL's rollout dump, the weight sync and the exported model are checked on runs 1 and 2.

(Which whole step is the newest, and two hosts where only one host's copy is torn:
test_checkpoints.py, and test_export.py on veRL's FSDP actor with two ranks.) The start-ups
of Ray and veRL dominate each process's time, so every check shares these two runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from ..conftest import CONF

pytestmark = [pytest.mark.slow, pytest.mark.ray]

# Messages veRL logs and carries on after: a run that logs them is broken.
SILENT_ERRORS = ("dtype mismatch", "Traceback (most recent call last)")
SHARD = "actor/model_world_size_1_rank_0.pt"
STEPS = 6
PROBLEMS = 3  # the shipped sample's rehearsal problems


def _args(run_dir: Path, data: Path, steps: int) -> list[str]:
    """`codefu-train` arguments of these runs: one prompt per step, unshuffled, every
    checkpoint kept, veRL's rollout dump on."""
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
        "trainer.max_actor_ckpt_to_keep=null",
        f"trainer.rollout_data_dir={run_dir / 'rollouts'}",
    ]


def _env(ray_tmp: Path) -> dict[str, str]:
    env = {**os.environ, "RAY_TMPDIR": str(ray_tmp)}  # Ray's socket paths are short
    env.pop("RAY_ADDRESS", None)
    return env


def _train(run_dir: Path, data: Path, steps: int) -> str:
    """`codefu-train cluster=cpu_verl` in its own process (`_args`); its whole log."""
    ray_tmp = Path("/tmp") / f"codefu-verl-cpu-{os.getpid()}"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "codefu_trainer.training.cli", *_args(run_dir, data, steps)],
            capture_output=True,
            text=True,
            timeout=840,
            env=_env(ray_tmp),
            check=False,
        )
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-6000:]
    return log


def _kill_during_last_save(run_dir: Path, data: Path) -> str:
    """`codefu-train` to step STEPS, killed (its whole process group) with SIGKILL as soon
    as veRL starts saving step STEPS; its log."""
    last = run_dir / "checkpoints" / f"global_step_{STEPS}"
    ray_tmp = Path("/tmp") / f"codefu-verl-kill-{os.getpid()}"
    log_path = run_dir.parent / "killed.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "codefu_trainer.training.cli", *_args(run_dir, data, STEPS)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=_env(ray_tmp),
            start_new_session=True,
        )
        try:
            while proc.poll() is None and not last.exists():
                time.sleep(0.01)
            assert proc.poll() is None, log_path.read_text()[-6000:]  # ended before the save
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        finally:
            _kill_leftovers(str(ray_tmp))
            shutil.rmtree(ray_tmp, ignore_errors=True)
    return log_path.read_text()


def _kill_leftovers(marker: str) -> None:
    """SIGKILL the processes of the killed run that left its process group (Ray's), until
    none is left (a raylet may start workers meanwhile); at most a minute."""
    for _ in range(60):
        pids = [
            int(proc.name)
            for proc in Path("/proc").iterdir()
            if proc.name.isdigit() and marker.encode() in _cmdline(proc)
        ]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        time.sleep(1)


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Run 1: steps 1-5 whole, step 6 killed during its save."""
    from codefu_data.config import DataConfig
    from codefu_data.prepare import prepare

    tmp = tmp_path_factory.mktemp("verl_cpu")
    data = prepare(
        DataConfig(source="sample", out_dir=str(tmp / "data")), progress=False, log=print
    ).out_dir
    run_dir = tmp / "killed"
    log = _kill_during_last_save(run_dir, data)
    ckpts = run_dir / "checkpoints"
    assert not list((ckpts / f"global_step_{STEPS}").glob("manifest.*")), "killed too late"
    for step in range(1, STEPS):
        assert list((ckpts / f"global_step_{step}").glob("manifest.*.json")), step
    return {"tmp": tmp, "run_dir": run_dir, "data": data, "log": log}


# The faults planted in the killed run's copy (step 6 is torn by the kill itself).
FAULTS = {
    f"global_step_5/{SHARD}": "cut",
    "global_step_4/actor/optim_world_size_1_rank_0.pt": "delete",
    "global_step_3/data.pt": "cut",
    "global_step_2/manifest.*.json": "delete",
}


@pytest.fixture(scope="module")
def resumed(killed: dict) -> dict:
    """Run 2: a copy of the killed run's directory, FAULTS applied, resumed to step 6."""
    run_dir = killed["tmp"] / "resumed"
    shutil.copytree(killed["run_dir"], run_dir, symlinks=True)
    ckpts = run_dir / "checkpoints"
    for step_file, fault in FAULTS.items():
        path = ckpts / step_file
        if fault == "cut":
            path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        else:
            for target in path.parent.glob(path.name):
                target.unlink()
    return {"run_dir": run_dir, "log": _train(run_dir, killed["data"], STEPS)}


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


def _assert_finished(log: str, resumed_from: Path, steps: Sequence[int]) -> None:
    for message in SILENT_ERRORS:
        assert message not in log
    assert "Resuming from " + str(resumed_from) in log
    assert [int(r["step"]) for r in _steps(log)] == list(steps)
    assert "codefu-train: final model of step" in log


def test_five_steps_without_silent_errors_before_the_kill(killed: dict) -> None:
    for message in SILENT_ERRORS:
        assert message not in killed["log"]
    assert [int(r["step"]) for r in _steps(killed["log"])] == list(range(1, STEPS))


def test_each_torn_step_is_reported_and_the_run_resumes_from_the_newest_whole_one(
    resumed: dict,
) -> None:
    log = resumed["log"]
    for expected in (
        f"checkpoint global_step_{STEPS} on ",  # the kill during its save
        f"global_step_5/{SHARD}: cut short",
        "global_step_4/actor/optim_world_size_1_rank_0.pt: missing",
        "global_step_3/data.pt: cut short",
        f"global_step_2/{SHARD}: in no manifest",
        "resuming from step 1 ",
    ):
        assert expected in log, expected
    ckpts = resumed["run_dir"] / "checkpoints"
    _assert_finished(log, ckpts / "global_step_1", range(2, STEPS + 1))
    for step in range(1, STEPS + 1):  # every step whole again
        assert list((ckpts / f"global_step_{step}").glob("manifest.*.json")), step
    assert {p.name for p in ckpts.glob("global_step_*")} == {
        f"global_step_{i}" for i in range(1, STEPS + 1)
    }
    assert (ckpts / "latest_checkpointed_iteration.txt").read_text().strip() == str(STEPS)


def test_the_exported_model_loads_and_differs_from_the_base_model(resumed: dict) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    run_dir = resumed["run_dir"]
    final = AutoModelForCausalLM.from_pretrained(run_dir / "model")
    base = AutoModelForCausalLM.from_pretrained(run_dir / "base_model")
    final_sd, base_sd = final.state_dict(), base.state_dict()
    assert final_sd.keys() == base_sd.keys()
    changed = [k for k in base_sd if not torch.equal(final_sd[k].float(), base_sd[k].float())]
    assert changed, "the exported model equals the base model"


def test_resume_continues_the_data_position(resumed: dict) -> None:
    run_dir = resumed["run_dir"]
    problems = json.loads((run_dir / "data" / "easy" / "problems.json").read_text())
    assert len(problems) == PROBLEMS
    for step in range(1, STEPS + 1):  # unshuffled, one prompt per step: step k is problem k
        names = {r["gts"]["name"] for r in _rollouts(run_dir, step)}
        assert names == {problems[(step - 1) % PROBLEMS]}, (step, names)


def test_the_judge_scores_every_sample_through_veRL_reward_loop(resumed: dict) -> None:
    from codefu_trainer.reward.config import RewardConfig, RewardMode
    from codefu_trainer.reward.service import RewardService

    run_dir = resumed["run_dir"]
    samples = [r for step in range(1, STEPS + 1) for r in _rollouts(run_dir, step)]
    assert len(samples) == STEPS * 4
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


def test_weights_reach_the_rollout_and_the_policy_moves(killed: dict, resumed: dict) -> None:
    records = _steps(killed["log"]) + _steps(resumed["log"])
    for r in records:
        # Rollout log-probs (hf_cpu server) equal the actor's: the weights were synced.
        assert r["training/rollout_probs_diff_max"] < 1e-4
    assert records[0]["actor/kl_loss"] == 0.0  # step 1: the actor is the reference
    assert records[-1]["actor/kl_loss"] > 0.0
    assert any(r["actor/grad_norm"] > 0 for r in records)
