"""The smoke's stages (docs/smoke.md): `train` (step 1 by `codefu-train` itself, a checkpoint
with its manifest), `torn` (steps 2 and 3 planted as an interrupted save leaves them, from hard
links to step 1's files), `resume` (a second `codefu-train` that must report every planted
fault, resume from step 1, run step 2, the first after an optimizer step, and export the
Hugging Face model), `export` (the model loads, has the base model's tensors, and training
changed some); and what they share (`Smoke`, `prepare`).

A stage still running at the smoke's deadline (DEADLINE_ENV, set by tools/smoke_host.py) is
stopped, and the table shows what was measured until then.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codefu_trainer.run import console
from codefu_trainer.run.config import TinyModelConfig
from codefu_trainer.training.checkpoints.manifest import is_manifest
from codefu_trainer.training.phase_probe import (
    GPU_BASELINE_ENV,
    GPU_INDEX_ENV,
    PHASE_LOG_ENV,
    ROOT_PID_ENV,
)

# Step 1 in `train` (its checkpoint the one resumed), step 2 in `resume`: the first step after
# an optimizer step, so its phases hold Adam's states.
STEPS = 2
CHECKPOINT_STEP = 1
# The wall-clock time (seconds since the epoch) by which the smoke must have stopped its stages.
DEADLINE_ENV = "CODEFU_SMOKE_DEADLINE"
# After SIGTERM, how long a stopped stage's processes get before SIGKILL.
STOP_GRACE_S = 10.0
# A GPU smoke's model: Qwen2.5-0.5B's shape (0.49B parameters), random weights.
GPU_SHAPE = TinyModelConfig(
    hidden_size=896,
    intermediate_size=4864,
    num_hidden_layers=24,
    num_attention_heads=14,
    num_key_value_heads=2,
    max_position_embeddings=32768,
)
GPU_VOCAB = 151936
# Response tokens of a GPU smoke without vLLM (transformers' generate; vLLM's: 1,024). The
# memory compared does not depend on them: every pass packs its micro-batches to the 4,096-token
# budgets, which a step's 16 sequences fill (prompts of up to 2,048 tokens).
HF_RESPONSE_TOKENS = 128
# Judge processes of a GPU smoke (its random model writes no code; the CPU smoke's: 2).
GPU_JUDGE_WORKERS = 4


@dataclass
class Stage:
    name: str
    ok: bool
    seconds: float
    detail: str
    started: float = 0.0  # wall-clock (time.time()) when the stage began
    steps: tuple[int, ...] = ()  # the veRL steps it ran (train, resume)


@dataclass
class Smoke:
    """What the stages share: where, on what, and with which overrides."""

    conf_dir: Path
    run_dir: Path
    gpu: int | None  # the NVML index of the GPU, None on CPU
    overrides: list[str]  # every stage's (ours and veRL's), the user's last
    stages: list[Stage] = field(default_factory=list)
    deadline: float | None = None  # wall-clock time by which the stages must have stopped

    @property
    def checkpoints(self) -> Path:
        return self.run_dir / "checkpoints"

    @property
    def phase_log(self) -> Path:
        return self.run_dir / "smoke" / "phases.jsonl"


def first_gpu_index() -> int:
    """The NVML index of the first GPU CUDA_VISIBLE_DEVICES shows (0 when it names none)."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
    return int(first) if first.isdigit() else 0


def has_key(overrides: Sequence[str], *keys: str) -> bool:
    """Whether an override sets one of `keys` (or a key under one)."""
    names = {re.split(r"[=]", o.lstrip("+~"), maxsplit=1)[0] for o in overrides}
    return any(n == k or n.startswith(k + ".") for n in names for k in keys)


def stage_overrides(
    run_dir: Path,
    data: Path,
    gpu: int | None,
    user: Sequence[str],
    vllm: bool,
    *,
    gpu_baseline: int = 0,
) -> list[str]:
    """The overrides both `codefu-train` stages share (steps are added per stage);
    `gpu_baseline`: bytes in use on the GPU before the smoke (the probe subtracts them)."""
    env = "++ray_kwargs.ray_init.runtime_env.env_vars"
    common = [
        f"data.out_dir={data}",
        f"run.dir={run_dir}",
        "run.tracking.mlflow=false",
        "verl.data.shuffle=false",
        "trainer.max_actor_ckpt_to_keep=null",
        f"trainer.rollout_data_dir={run_dir / 'rollouts'}",
        f"{env}.{PHASE_LOG_ENV}='{run_dir / 'smoke' / 'phases.jsonl'}'",
        f"{env}.{ROOT_PID_ENV}='{os.getpid()}'",
    ]
    if gpu is None:
        return [
            "cluster=cpu_verl",
            *common,
            "rehearsal.save_steps=1",
            "rehearsal.prompts_per_step=1",
            "rehearsal.num_generations=4",
            *user,
        ]
    from codefu_trainer.training.verl.cpu.run import hf_rollout_overrides

    model = [] if has_key(user, "model") else [f"model.path={run_dir / 'base_model'}"]
    arf = "actor_rollout_ref"
    budget = 4096
    rollout = [] if vllm else hf_rollout_overrides()
    # transformers' generate took 155 s for a step's 16 x 1,024 tokens on an H200.
    response = 1024 if vllm else HF_RESPONSE_TOKENS
    return [
        "cluster=local",
        "cluster.gpus_per_node=1",
        *model,
        *common,
        f"{env}.{GPU_INDEX_ENV}='{gpu}'",
        f"{env}.{GPU_BASELINE_ENV}='{gpu_baseline}'",
        f"reward.worker.num_workers={GPU_JUDGE_WORKERS}",
        # One agent-loop and one reward-loop worker (veRL's default: 8 each): fewer processes
        # to start, and a step's 16 requests reach the rollout together.
        f"{arf}.rollout.agent.num_workers=1",
        "verl.reward.num_workers=1",
        "trainer.save_freq=1",
        "trainer.test_freq=-1",
        "trainer.val_before_train=false",
        "verl.data.train_batch_size=4",
        "verl.data.max_prompt_length=2048",
        f"verl.data.max_response_length={response}",
        f"{arf}.rollout.n=4",
        f"{arf}.actor.ppo_mini_batch_size=2",
        f"{arf}.rollout.tensor_model_parallel_size=1",
        f"{arf}.rollout.gpu_memory_utilization=0.5",
        f"{arf}.rollout.max_num_batched_tokens={budget}",
        f"{arf}.actor.ppo_max_token_len_per_gpu={budget}",
        f"{arf}.ref.log_prob_max_token_len_per_gpu={budget}",
        f"{arf}.rollout.log_prob_max_token_len_per_gpu={budget}",
        *rollout,
        *user,
    ]


def steps_overrides(gpu: int | None, steps: int) -> list[str]:
    """Train to step `steps` (the shipped sample's 8 problems: 2 steps an epoch on a GPU);
    only the last stage exports the final model."""
    export = [] if steps == STEPS else ["run.export_final=false"]  # the resume exports
    if gpu is None:
        return [f"rehearsal.steps={steps}", *export]
    return [f"trainer.total_training_steps={steps}", f"trainer.total_epochs={steps}", *export]


def stage_argv(smoke: Smoke, steps: int) -> list[str]:
    """`codefu-train --verbose` to step `steps` with the smoke's overrides."""
    return [
        sys.executable,
        "-m",
        "codefu_trainer.training.cli",
        "--verbose",  # everything to this process, which keeps it in the stage's log
        "--config-dir",
        str(smoke.conf_dir),
        *smoke.overrides[:1],
        *steps_overrides(smoke.gpu, steps),
        *smoke.overrides[1:],
    ]


def stop_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM to the stage's process group (its Ray processes too), SIGKILL after
    STOP_GRACE_S."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def run_stage(smoke: Smoke, name: str, steps: int) -> tuple[int | None, str]:
    """`codefu-train --verbose` to step `steps` in its own process group (Ray in a temp dir of
    its own); all its output goes to <run dir>/smoke/<name>.log, the project's lines also to
    the console (all of it with --verbose). Returns (exit code, log); the code is None when
    the stage was stopped at the smoke's deadline."""
    argv = stage_argv(smoke, steps)
    ray_tmp = Path("/tmp") / f"codefu-smoke-{os.getpid()}-{name}"  # Ray's socket paths are short
    env = {**os.environ, "RAY_TMPDIR": str(ray_tmp)}
    env.pop("RAY_ADDRESS", None)
    log_path = smoke.run_dir / "smoke" / f"{name}.log"
    print(f"codefu-train --smoke: {name}: {' '.join(argv[3:])}", flush=True)
    lines: list[str] = []
    stopped = threading.Event()
    try:
        with log_path.open("w") as log:
            proc = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env=env,
                start_new_session=True,  # one group: stopping it stops its Ray processes
            )

            def stop() -> None:
                if proc.poll() is None:  # still running at the deadline
                    stopped.set()
                    stop_group(proc)

            timer = None
            if smoke.deadline is not None:
                left = max(0.0, smoke.deadline - time.time())
                timer = threading.Timer(left, stop)
                timer.daemon = True
                timer.start()
            assert proc.stdout is not None
            for line in proc.stdout:
                if console.shows(line):
                    sys.stdout.write(line)
                log.write(line)
                lines.append(line)
            code = proc.wait()
            if timer is not None:
                timer.cancel()
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    return (None if stopped.is_set() else code), "".join(lines)


def logged_steps(log: str) -> list[int]:
    """The steps veRL's console logger reported (`step:N - ... critic/score/mean:...`)."""
    steps = []
    for line in log.splitlines():
        at = line.find("step:")
        if at >= 0 and " - " in line[at:] and "critic/score/mean:" in line[at:]:
            with contextlib.suppress(ValueError):
                steps.append(int(line[at + 5 :].split(" - ", 1)[0]))
    return steps


def whole_steps(root: Path) -> list[int]:
    """Steps with a manifest, ascending."""
    found = [int(p.name.split("_")[-1]) for p in root.glob("global_step_*") if p.is_dir()]
    return sorted(s for s in found if list((root / f"global_step_{s}").glob("manifest.*.json")))


def plant_torn_steps(root: Path, whole: int) -> list[str]:
    """Steps whole+1 and whole+2 as an interrupted save leaves them, from step `whole`: the
    next one with its manifest, its rank-0 model shard cut short, its optimizer shard gone and
    data.pt cut short; the one after with no manifest at all. Every file is a hard link to
    step `whole`'s (a copy where the file system refuses links), except the two cut short,
    which are new files holding the first half of theirs. Returns what the resume must
    report, one text per fault."""
    source = root / f"global_step_{whole}"
    world = json.loads((source / "actor" / "fsdp_config.json").read_text())["world_size"]
    model, optim = (f"actor/{k}_world_size_{world}_rank_0.pt" for k in ("model", "optim"))
    torn, unsaved = (f"global_step_{whole + k}" for k in (1, 2))
    cut = {model, "data.pt"}
    for step in (torn, unsaved):
        shutil.rmtree(root / step, ignore_errors=True)
        for path in sorted(p for p in source.rglob("*") if p.is_file()):
            rel = path.relative_to(source).as_posix()
            dest = root / step / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            if step == torn and rel in cut:  # never truncate a link: it is step `whole`'s file
                with path.open("rb") as src, dest.open("wb") as out:
                    out.write(src.read(path.stat().st_size // 2))
            elif (step == torn and rel == optim) or (step == unsaved and is_manifest(rel)):
                continue
            else:
                try:
                    os.link(path, dest)
                except OSError:
                    shutil.copy2(path, dest)
    return [
        f"{torn}/{model}: cut short",
        f"{torn}/{optim}: missing",
        f"{torn}/data.pt: cut short",
        f"{unsaved}/{model}: in no manifest",
    ]


def check_export(run_dir: Path) -> str | None:
    """Why the exported model at <run dir>/model is not the trained base model (None: it
    loads, holds the base model's tensors, and training changed at least one)."""
    import torch
    from transformers import AutoModelForCausalLM

    base_dir = run_dir / "base_model"
    final = AutoModelForCausalLM.from_pretrained(run_dir / "model", dtype="auto").state_dict()
    if not base_dir.is_dir():
        return None if final else "the exported model has no tensors"
    base = AutoModelForCausalLM.from_pretrained(base_dir, dtype="auto").state_dict()
    if final.keys() != base.keys():
        return f"its tensors differ from the base model's: {sorted(final.keys() ^ base.keys())[:5]}"
    if all(torch.equal(final[k].float(), base[k].float()) for k in base):
        return "it equals the base model: no update reached it"
    return None


@contextlib.contextmanager
def timed(smoke: Smoke, name: str) -> Iterator[dict[str, Any]]:
    """Record stage `name`: ok unless the body sets result["why"] or raises; the body may set
    result["steps"], the veRL steps the stage ran."""
    result: dict[str, Any] = {"why": None, "detail": "", "steps": ()}
    started, start = time.time(), time.monotonic()
    try:
        yield result
    except Exception as exc:  # a failed stage is reported, the next ones still run
        result["why"] = f"{type(exc).__name__}: {exc}"
    why = result["why"]
    seconds = time.monotonic() - start
    detail = why or str(result["detail"])
    smoke.stages.append(Stage(name, why is None, seconds, detail, started, tuple(result["steps"])))
    print(f"codefu-train --smoke: {name}: {'ok' if why is None else 'FAILED: ' + why}", flush=True)


def stage_verdict(smoke: Smoke, name: str, code: int | None) -> str | None:
    """Why a `codefu-train` stage failed by its exit, or None."""
    if code is None:
        return "stopped at the smoke's deadline (tools/smoke_host.py --budget)"
    if code != 0:
        return f"codefu-train exited {code} (log: {smoke.run_dir / 'smoke' / (name + '.log')})"
    return None


def run_stages(smoke: Smoke) -> None:
    """train → torn → resume → export, each checked (`Smoke.stages`)."""
    root = smoke.checkpoints
    with timed(smoke, "train") as r:
        code, log = run_stage(smoke, "train", CHECKPOINT_STEP)
        expected = list(range(1, CHECKPOINT_STEP + 1))
        r["steps"] = logged_steps(log)
        if why := stage_verdict(smoke, "train", code):
            r["why"] = why
        elif logged_steps(log) != expected:
            r["why"] = f"veRL logged steps {logged_steps(log)}, not {expected}"
        elif whole_steps(root) != expected:
            r["why"] = f"steps with a manifest: {whole_steps(root)}, not {expected}"
        r["detail"] = f"step {CHECKPOINT_STEP}, its checkpoint with its manifest"
    if not smoke.stages[-1].ok:
        return
    with timed(smoke, "torn") as r:
        faults = plant_torn_steps(root, CHECKPOINT_STEP)
        r["detail"] = (
            f"{len(faults)} faults planted in steps {CHECKPOINT_STEP + 1}-{STEPS + 1} "
            "(hard links, 2 files cut)"
        )
    if not smoke.stages[-1].ok:
        return
    with timed(smoke, "resume") as r:
        code, log = run_stage(smoke, "resume", STEPS)
        missed = [f for f in faults if f not in log]
        r["steps"] = logged_steps(log)
        if why := stage_verdict(smoke, "resume", code):
            r["why"] = why
        elif missed:
            r["why"] = f"faults not reported: {missed}"
        elif f"resuming from step {CHECKPOINT_STEP} " not in log:
            r["why"] = f"it did not resume from step {CHECKPOINT_STEP}"
        elif logged_steps(log) != [STEPS]:
            r["why"] = f"veRL logged steps {logged_steps(log)}, not [{STEPS}]"
        elif (
            whole_steps(root) != list(range(1, STEPS + 1))
            or (root / f"global_step_{STEPS + 1}").exists()
        ):
            r["why"] = f"steps with a manifest afterwards: {whole_steps(root)}"
        r["detail"] = (
            f"{len(faults)} faults reported, resumed from step {CHECKPOINT_STEP}, step {STEPS}"
        )
    if not smoke.stages[-1].ok:
        return
    with timed(smoke, "export") as r:
        r["why"] = check_export(smoke.run_dir)
        r["detail"] = f"{smoke.run_dir / 'model'} loads and differs from the base model"


def gpu_baseline(gpu: int) -> int:
    """Bytes the smoke's GPU measure reads before the smoke starts anything on the GPU (other
    processes' memory, and with NVML's v1 `used` the driver's reserve): the probe subtracts it."""
    from codefu_trainer.training.phase_probe import gpu_memory_sampler

    found = gpu_memory_sampler(gpu)
    return found[0]() if found is not None else 0


def deadline_from_env() -> float | None:
    """DEADLINE_ENV's wall-clock time, or None when unset."""
    value = os.environ.get(DEADLINE_ENV)
    return float(value) if value else None


def compose_smoke(conf_dir: Path, user: Sequence[str]) -> tuple[Any, Path, int | None]:
    """(our composed config, the run directory, the GPU's NVML index or None on CPU): what
    the smoke runs on, before it writes anything."""
    from codefu_trainer.run.gpu import visible_gpu_count
    from codefu_trainer.run.overrides import ConfigError, parse_override, split_overrides
    from codefu_trainer.training.compose import compose_train, resolve_run_dir, to_train_config

    ours, _ = split_overrides(user)
    mine = [parse_override("run.name=codefu-smoke"), *(o for o in ours if o.first_key != "cluster")]
    kinds = [o.value for o in ours if o.key == "cluster"]
    if kinds and kinds[-1] not in ("local", "cpu_verl"):
        raise ConfigError(
            f"cluster={kinds[-1]}: the smoke runs on this machine: cluster=local (its GPU, or "
            "its CPU without one) or cluster=cpu_verl (its CPU)."
        )
    gpu = first_gpu_index() if visible_gpu_count() and kinds[-1:] != ["cpu_verl"] else None
    cfg = to_train_config(compose_train(conf_dir, mine))
    return cfg, resolve_run_dir(cfg), gpu


def prepare(conf_dir: Path, user: Sequence[str]) -> Smoke:
    """The run directory, the shipped sample's problems (unless data.out_dir is given) and,
    on a GPU, the random model of GPU_SHAPE (unless model=... is given) and what the GPU held
    before the smoke."""
    cfg, run_dir, gpu = compose_smoke(conf_dir, user)
    (run_dir / "smoke").mkdir(parents=True, exist_ok=True)
    console.log_to(run_dir)  # library output (and the sample's preparation) to its log
    data = sample_data(cfg, run_dir, user)
    if gpu is not None and not has_key(user, "model", "model.path"):
        from codefu_trainer.training.rehearsal.tiny_model import write_tiny_model

        write_tiny_model(GPU_SHAPE, run_dir / "base_model", vocab_size=GPU_VOCAB)
    vllm = importlib.util.find_spec("vllm") is not None
    rest = [o for o in user if not o.startswith("cluster=")]
    baseline = gpu_baseline(gpu) if gpu is not None else 0
    overrides = stage_overrides(run_dir, data, gpu, rest, vllm, gpu_baseline=baseline)
    return Smoke(conf_dir, run_dir, gpu, overrides, deadline=deadline_from_env())


def sample_data(cfg: Any, run_dir: Path, user: Sequence[str]) -> Path:
    """The prepared problems: data.out_dir when the user gives it, else the shipped sample
    prepared into <run dir>/sample-data (once)."""
    if has_key(user, "data.out_dir"):
        return Path(cfg.data.out_dir)
    from codefu_data.config import DataConfig
    from codefu_data.prepare import prepare as prepare_data

    data = run_dir / "sample-data"
    if not (data / cfg.data.tier / "train.parquet").is_file():
        prepare_data(DataConfig(source="sample", out_dir=str(data)), progress=False, log=print)
    return data
