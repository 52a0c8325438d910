"""Torn checkpoints in veRL 0.9.1's own trainer on CPU (`codefu-train cluster=cpu_verl`).

One run of 6 steps with a checkpoint per step is killed with SIGKILL as soon as the
directory of its last step appears: veRL's save of step 6 under way or just returned, its
manifest not yet written (checked; on this project's machine the kill has landed after
veRL's files and tracker). Its directory is copied per case, and each copy resumes for
one step:

- as killed: step 6 is torn, the run resumes from step 5 and trains step 6 again;
- with four more faults, one per step: step 5's model shard cut to half its size, step 4's
  optimizer shard deleted, step 3's `data.pt` cut short, step 2's manifest deleted. The
  run reports each (which file, what is wrong), resumes from step 1 and trains step 2.

Each finishes with its final model. (Two hosts where only one host's copy is torn:
test_export.py, on veRL's FSDP actor with two ranks.)
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .test_verl_cpu_trainer import SILENT_ERRORS, _args, _steps, _train

pytestmark = [pytest.mark.slow, pytest.mark.ray]

SHARD = "actor/model_world_size_1_rank_0.pt"
STEPS = 6
SHORT = ["rehearsal.max_completion_tokens=48", "trainer.max_actor_ckpt_to_keep=null"]


def _kill_during_last_save(run_dir: Path, data: Path) -> None:
    """`codefu-train` to step STEPS, killed (its whole process group) with SIGKILL as soon
    as veRL starts saving step STEPS."""
    last = run_dir / "checkpoints" / f"global_step_{STEPS}"
    ray_tmp = Path("/tmp") / f"codefu-verl-kill-{os.getpid()}"
    env = {**os.environ, "RAY_TMPDIR": str(ray_tmp)}
    env.pop("RAY_ADDRESS", None)
    args = _args(run_dir, data, STEPS, SHORT)
    log_path = run_dir.parent / "killed.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "codefu_trainer.training.cli", *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    try:
        while proc.poll() is None and not last.exists():
            time.sleep(0.01)
        assert proc.poll() is None, log_path.read_text()[-6000:]  # ended before the save
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        log.close()
        _kill_leftovers(str(ray_tmp))
        shutil.rmtree(ray_tmp, ignore_errors=True)


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
    from codefu_data.config import DataConfig
    from codefu_data.prepare import prepare

    tmp = tmp_path_factory.mktemp("verl_cpu_torn")
    data = prepare(
        DataConfig(source="sample", out_dir=str(tmp / "data")), progress=False, log=print
    ).out_dir
    run_dir = tmp / "run"
    _kill_during_last_save(run_dir, data)
    ckpts = run_dir / "checkpoints"
    assert not list((ckpts / f"global_step_{STEPS}").glob("manifest.*")), "killed too late"
    for step in range(1, STEPS):
        assert list((ckpts / f"global_step_{step}").glob("manifest.*.json")), step
    return {"tmp": tmp, "run_dir": run_dir, "data": data}


def _resume(killed: dict, name: str, steps: int, tear: dict[str, object] | None = None) -> str:
    run_dir = killed["tmp"] / name
    shutil.copytree(killed["run_dir"], run_dir, symlinks=True)
    ckpts = run_dir / "checkpoints"
    for step_file, fault in (tear or {}).items():
        path = ckpts / step_file
        if fault == "cut":
            path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        elif fault == "delete":
            for target in path.parent.glob(path.name):
                target.unlink()
    return _train(run_dir, killed["data"], steps, extra=SHORT)


def _assert_finished(log: str, resumed_from: Path, steps: list[int]) -> None:
    for message in SILENT_ERRORS:
        assert message not in log
    assert "Resuming from " + str(resumed_from) in log
    assert [int(r["step"]) for r in _steps(log)] == steps
    assert "codefu-train: final model of step" in log


def test_a_run_killed_while_saving_resumes_from_its_newest_whole_step(killed: dict) -> None:
    log = _resume(killed, "as_killed", STEPS)
    assert f"checkpoint global_step_{STEPS} on " in log
    assert f"resuming from step {STEPS - 1}" in log
    ckpts = killed["tmp"] / "as_killed" / "checkpoints"
    _assert_finished(log, ckpts / f"global_step_{STEPS - 1}", [STEPS])


def test_each_torn_step_is_reported_and_the_run_resumes_from_step_1(killed: dict) -> None:
    log = _resume(
        killed,
        "torn",
        2,
        {
            f"global_step_5/{SHARD}": "cut",
            "global_step_4/actor/optim_world_size_1_rank_0.pt": "delete",
            "global_step_3/data.pt": "cut",
            "global_step_2/manifest.*.json": "delete",
        },
    )
    for expected in (
        f"checkpoint global_step_{STEPS} on ",
        f"global_step_5/{SHARD}: cut short",
        "global_step_4/actor/optim_world_size_1_rank_0.pt: missing",
        "global_step_3/data.pt: cut short",
        f"global_step_2/{SHARD}: in no manifest",
        "resuming from step 1 ",
    ):
        assert expected in log, expected
    ckpts = killed["tmp"] / "torn" / "checkpoints"
    _assert_finished(log, ckpts / "global_step_1", [2])
    assert sorted(p.name for p in ckpts.glob("global_step_*")) == ["global_step_1", "global_step_2"]
