"""`codefu-train --smoke`: two GRPO steps of veRL's own trainer through the real stack, on this
machine's GPU, or on its CPU when it has none (docs/smoke.md).

Stages, each checked: `train` (step 1 by `codefu-train` itself, a checkpoint with its
manifest), `torn` (steps 2 and 3 planted as an interrupted save leaves them), `resume` (a
second `codefu-train` that must report every planted fault, resume from step 1, finish step 2,
the first after an optimizer step, and export the Hugging Face model), `export` (the model
loads, has the base model's tensors, and training changed some). Then one table: per phase of
a step (rollout, old log-probs, reference log-probs, actor update) the peak memory measured,
the preflight plan's figure for the same shape and settings, and the time; how long judging
went on after the last response of a step; each stage's time and start-up. On a GPU the exit
code also holds the plan to what was measured (`PLAN_BELOW`, `PLAN_ABOVE`); on a CPU the
memory is not device memory and is not compared. The preflight's table of the plan goes to
<run dir>/smoke/plan.txt.

The measurements come from veRL's trainer process: `training.phase_probe.PhaseProbe`
(enabled there by `phase_probe.PHASE_LOG_ENV`, in training/verl/trainer.py) samples the
memory while each phase runs and writes one JSON line per phase and step.

`codefu-train --smoke --check` (`check`) composes both stages and runs the checks a run makes
before it starts (on a GPU the preflight and its plan), and starts nothing.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codefu_trainer.run import console
from codefu_trainer.run.stack import VERL
from codefu_trainer.training.smoke.stages import (
    CHECKPOINT_STEP,
    GPU_SHAPE,
    GPU_VOCAB,
    STEPS,
    Smoke,
    Stage,
    compose_smoke,
    has_key,
    prepare,
    run_stages,
    sample_data,
    stage_overrides,
    steps_overrides,
)
from codefu_trainer.training.smoke.table import (
    PHASES,
    print_table,
    read_phases,
    smoke_plan,
    table_rows,
)

# What the smoke imports: veRL's trainer and Ray (tracking is off: no MLflow).
NEEDS = VERL


def startup_seconds(stage: Stage, phases: dict[str, list[dict[str, Any]]]) -> float | None:
    """From a stage's start to its first step's rollout (Ray, veRL's workers, the models, the
    rollout server), or None when it measured no step."""
    began = [
        float(r["began"])
        for r in phases.get("rollout", [])
        if int(r["step"]) in stage.steps and "began" in r
    ]
    return min(began) - stage.started if began and stage.started else None


def stage_line(stage: Stage, phases: dict[str, list[dict[str, Any]]]) -> str:
    mark = "ok    " if stage.ok else "FAILED"
    startup = startup_seconds(stage, phases)
    up = f"start-up {startup:6.1f} s" if startup is not None else " " * 17
    return f"stage {stage.name:<7}{mark} {stage.seconds:7.1f} s  {up}  {stage.detail}"


def write_plan_text(smoke: Smoke, plans: tuple[Any, Any] | None, note: str) -> None:
    """The preflight's table of the plan the table compares with, to <run dir>/smoke/plan.txt."""
    from codefu_trainer.training.planning.memory import plan_table

    lines: list[str] = []
    if plans is None:
        lines.append(note)
    else:
        lines.append("# after the first optimizer step (Adam's states allocated):")
        plan_table(plans[0], lines.append)
        lines.append("# the first step's rollout and log-prob phases (no Adam's states yet):")
        plan_table(plans[1], lines.append)
    (smoke.run_dir / "smoke" / "plan.txt").write_text("\n".join(lines) + "\n")


def main(conf_dir: Path, user: Sequence[str]) -> int:
    """`codefu-train --smoke [OVERRIDES]`: the stages, the table; 0 when all passed (and, on
    a GPU, every compared phase's plan is within bounds), 1 otherwise."""
    smoke = prepare(conf_dir, user)
    where = f"GPU {smoke.gpu}" if smoke.gpu is not None else "this machine's CPU (no GPU found)"
    print(f"codefu-train --smoke: on {where}; run dir {smoke.run_dir}", flush=True)
    run_stages(smoke)
    vllm = importlib.util.find_spec("vllm") is not None
    try:
        plans, note = smoke_plan(smoke)
    except Exception as exc:  # the table still shows what was measured
        plans, note = None, f"plan: none ({type(exc).__name__}: {exc})"
    write_plan_text(smoke, plans, note)
    phases = read_phases(smoke.phase_log)
    rows = table_rows(phases, plans, smoke.gpu is not None, vllm)
    measure = next((r["measure"] for p in PHASES for r in phases.get(p, [])), "nothing")
    lines: list[str] = []
    tail = phases.get("judging after the last response", [])
    print_table(rows, tail, measure, note, lines.append)
    lines += [stage_line(stage, phases) for stage in smoke.stages]
    report = "\n".join(lines)
    (smoke.run_dir / "smoke" / "table.txt").write_text(report + "\n")
    print("\n" + report, file=console.stdout(), flush=True)
    passed = len(smoke.stages) == 4 and all(s.ok for s in smoke.stages)
    memory_ok = all(r.verdict not in ("PLAN BELOW", "PLAN ABOVE") for r in rows)
    if smoke.gpu is not None and any(r.measured_gib is None for r in rows[1:]):
        memory_ok = False  # a GPU smoke measures every planned phase
    print(
        "codefu-train --smoke: "
        + ("passed" if passed and memory_ok else "FAILED")
        + f" ({smoke.run_dir / 'smoke' / 'table.txt'})",
        flush=True,
    )
    return 0 if passed and memory_ok else 1


def check(conf_dir: Path, user: Sequence[str]) -> int:
    """`codefu-train --smoke --check`: compose both stages as the smoke would (in a temporary
    folder: the shipped sample prepared there, the GPU model's config.json written there) and
    run the checks a run makes before starting, the preflight and its plan on a GPU; print
    them; start nothing. 0 when every check passed, 2 otherwise (ConfigError)."""
    from codefu_trainer.run.overrides import ConfigError
    from codefu_trainer.training.clusters.registry import cluster_of, compose_run
    from codefu_trainer.training.planning.preflight import preflight, refusal_message, report
    from codefu_trainer.training.verl.recipes import check_recipe

    with tempfile.TemporaryDirectory(prefix="codefu-smoke-check-") as tmp:
        cfg, _, gpu = compose_smoke(conf_dir, user)
        run_dir = Path(tmp) / "run"
        data = sample_data(cfg, run_dir, user)
        if gpu is not None and not has_key(user, "model", "model.path"):
            write_model_config(run_dir / "base_model")
        rest = [o for o in user if not o.startswith(("cluster=", "run.dir="))]
        vllm = importlib.util.find_spec("vllm") is not None
        overrides = stage_overrides(run_dir, data, gpu, rest, vllm)
        where = f"GPU {gpu}" if gpu is not None else "this machine's CPU (no GPU found)"
        print(f"codefu-train --smoke --check: on {where}", flush=True)
        refused = []
        for name, steps in (("train", CHECKPOINT_STEP), ("resume", STEPS)):
            argv = [*overrides[:1], *steps_overrides(gpu, steps), *overrides[1:]]
            run = compose_run(conf_dir, argv, gpus_detected=1)
            assert run.verl is not None
            check_recipe(run.verl)
            print(f"  {name}: composed and validated (veRL's config, our checks)", flush=True)
            if gpu is None:
                continue
            result = preflight(run, cluster_of(run.cfg))
            # The smoke writes its random model when it starts; here only its config.json.
            kept = tuple(c for c in result.checks if c.name != "model: files")
            result = dataclasses.replace(result, checks=kept)
            report(result, lambda line: print(f"    {line}"))
            if result.refused:
                refused.append(f"{name}: {refusal_message(result)}")
    if refused:
        raise ConfigError("\n".join(refused))
    print(
        "codefu-train --smoke --check: both stages composed and checked; nothing started.",
        file=sys.stderr,
    )
    return 0


def write_model_config(out_dir: Path) -> None:
    """GPU_SHAPE's config.json alone (what the plan reads), without weights."""
    from codefu_trainer.training.rehearsal.tiny_model import tiny_model_config

    out_dir.mkdir(parents=True, exist_ok=True)
    tiny_model_config(GPU_SHAPE, GPU_VOCAB).to_json_file(out_dir / "config.json")
