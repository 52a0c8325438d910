"""`codefu-train --smoke`: three GRPO steps of veRL's own trainer through the real stack, on
this machine's GPU, or on its CPU when it has none (docs/smoke.md).

Stages, each checked: `train` (steps 1-2 by `codefu-train` itself, a checkpoint with its
manifest after each), `torn` (steps 3 and 4 planted as an interrupted save leaves them),
`resume` (a second `codefu-train` that must report every planted fault, resume from step 2,
finish step 3 and export the Hugging Face model), `export` (the model loads, has the base
model's tensors, and training changed some). Then one table: per phase of a step (rollout,
old log-probs, reference log-probs, actor update) the peak memory measured, the preflight
plan's figure for the same shape and settings, and the time; and how long judging went on
after the last response of a step. On a GPU the exit code also holds the plan to what was
measured (`PLAN_BELOW`, `PLAN_ABOVE`); on a CPU the memory is not device memory and is not
compared.

The measurements come from veRL's trainer process: `training.phase_probe.PhaseProbe`
(enabled there by `phase_probe.PHASE_LOG_ENV`, in training/verl/trainer.py) samples the
memory while each phase runs and writes one JSON line per phase and step.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

from codefu_trainer.run import console
from codefu_trainer.run.stack import VERL
from codefu_trainer.training.smoke.stages import prepare, run_stages
from codefu_trainer.training.smoke.table import (
    PHASES,
    print_table,
    read_phases,
    smoke_plan,
    table_rows,
)

# What the smoke imports: veRL's trainer and Ray (tracking is off: no MLflow).
NEEDS = VERL


def main(conf_dir: Path, user: Sequence[str]) -> int:
    """`codefu-train --smoke [OVERRIDES]`: the stages, the table; 0 when all passed (and, on
    a GPU, every compared phase's plan is within bounds), 1 otherwise."""
    smoke = prepare(conf_dir, user)
    where = f"GPU {smoke.gpu}" if smoke.gpu is not None else "this machine's CPU (no GPU found)"
    print(f"codefu-train --smoke: on {where}; run dir {smoke.run_dir}", flush=True)
    run_stages(smoke)
    vllm = importlib.util.find_spec("vllm") is not None
    try:
        plan, note = smoke_plan(smoke)
    except Exception as exc:  # the table still shows what was measured
        plan, note = None, f"plan: none ({type(exc).__name__}: {exc})"
    phases = read_phases(smoke.phase_log)
    rows = table_rows(phases, plan, smoke.gpu is not None, vllm)
    measure = next((r["measure"] for p in PHASES for r in phases.get(p, [])), "nothing")
    lines: list[str] = []
    tail = phases.get("judging after the last response", [])
    print_table(rows, tail, measure, note, lines.append)
    for stage in smoke.stages:
        mark = "ok    " if stage.ok else "FAILED"
        lines.append(f"stage {stage.name:<7}{mark} {stage.seconds:7.1f} s  {stage.detail}")
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
