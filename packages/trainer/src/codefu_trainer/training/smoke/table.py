"""The smoke's table: per phase of a step (rollout, old log-probs, reference log-probs, actor
update) the peak memory measured in veRL's trainer process (`training/phase_probe.py`), the
preflight plan's figure for the same shape and settings, and the time; how long judging went
on after a step's last response; and, on a GPU, whether the plan is within
`PLAN_BELOW`/`PLAN_ABOVE` of what was measured.

A phase is compared over the steps after the run's first optimizer step, when Adam's states
exist, with the plan that counts them (the update: every step, since the first makes them in
its `step()`); where only the first step was measured, with the plan of a first step.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codefu_trainer.run.config import TrainConfig
from codefu_trainer.training.smoke.stages import Smoke

# The phases of a veRL step the memory plan names (training/planning/memory.py `_phases`).
PHASES = ("rollout", "old log-probs", "reference log-probs", "actor update")
# The plan may be below a measured phase by at most 15%, above it by at most 25%.
PLAN_BELOW = 0.15
PLAN_ABOVE = 0.25
GIB = 1024**3


@dataclass(frozen=True)
class Row:
    phase: str
    measured_gib: float | None
    planned_gib: float | None
    seconds: float | None
    verdict: str  # "ok", "PLAN BELOW", "PLAN ABOVE", or why not compared
    steps: tuple[int, ...] = ()  # the steps measured


def read_phases(path: Path) -> dict[str, list[dict[str, Any]]]:
    by_phase: dict[str, list[dict[str, Any]]] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            record = json.loads(line)
            by_phase.setdefault(str(record["phase"]), []).append(record)
    return by_phase


def compare(measured: float, planned: float) -> str:
    if planned < measured * (1 - PLAN_BELOW):
        return "PLAN BELOW"
    if planned > measured * (1 + PLAN_ABOVE):
        return "PLAN ABOVE"
    return "ok"


def table_rows(
    phases: dict[str, list[dict[str, Any]]],
    plans: tuple[Any, Any] | None,
    on_gpu: bool,
    vllm: bool,
) -> list[Row]:
    """One row per planned phase: the peak and the mean time over the steps after the run's
    first optimizer step (the update: every step), against `plans[0]` (Adam's states counted);
    where only the first step was measured, that step against `plans[1]` (a first step's)."""
    first = min((int(r["step"]) for rs in phases.values() for r in rs), default=1)
    rows = []
    for name in PHASES:
        records = phases.get(name, [])
        later = [r for r in records if name == "actor update" or int(r["step"]) > first]
        plan = plans[0] if plans is not None else None
        if not later and plans is not None:
            plan = plans[1]
        records = later or records
        measured = max((r["peak_bytes"] for r in records), default=None)
        seconds = sum(r["seconds"] for r in records) / len(records) if records else None
        planned = None
        if plan is not None and any(p.name == name for p in plan.phases):
            planned = plan.phase(name).total_gib
        gib = measured / GIB if measured is not None else None
        if gib is None or planned is None:
            verdict = "not measured" if gib is None else "not planned"
        elif not on_gpu:
            verdict = "not compared (CPU)"
        elif name == "rollout" and not vllm:
            verdict = "not compared (hf rollout)"
        else:
            verdict = compare(gib, planned)
        steps = tuple(sorted({int(r["step"]) for r in records}))
        rows.append(Row(name, gib, planned, seconds, verdict, steps))
    return rows


def print_table(
    rows: Sequence[Row],
    tail: Sequence[dict[str, Any]],
    measure: str,
    plan_note: str,
    out: Callable[[str], None] = print,
) -> None:
    def cell(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    out(f"{'phase':<22}{'measured GiB':>13}{'plan GiB':>10}{'s/step':>8}{'steps':>7}  verdict")
    for r in rows:
        steps = ",".join(map(str, r.steps)) or "-"
        out(
            f"{r.phase:<22}{cell(r.measured_gib, '13.2f')}{cell(r.planned_gib, '10.2f')}"
            f"{cell(r.seconds, '8.1f')}{steps:>7}  {r.verdict}"
        )
    if tail:
        worst = max(t["seconds"] for t in tail)
        jobs = sum(t.get("jobs", 0) for t in tail)
        out(
            f"judging after the last response of a step: at most {worst:.2f} s "
            f"({len(tail)} steps, {jobs:.0f} jobs judged)"
        )
    out(
        f"measured: {measure}; peak over the steps shown, sampled during each phase and at its "
        "ends; the steps after the first optimizer step where measured (Adam's states exist)."
    )
    out(plan_note)


def smoke_plan(smoke: Smoke) -> tuple[tuple[Any, Any] | None, str]:
    """The preflight's memory plans for the config the resumed stage ran (its
    <run dir>/config/{train,verl}.yaml): after the first optimizer step and in a first step
    (Adam's states not yet allocated); or None and why; and the table's note on them."""
    from omegaconf import OmegaConf

    from codefu_trainer.training.compose import to_train_config
    from codefu_trainer.training.planning.inputs import this_machine_gpu
    from codefu_trainer.training.planning.memory import MARGIN
    from codefu_trainer.training.planning.model_shape import ShapeError, resolve_shape

    config = smoke.run_dir / "config"
    if not (config / "verl.yaml").is_file():
        return None, f"plan: none (no {config / 'verl.yaml'}: no stage composed a run)"
    verl = OmegaConf.load(config / "verl.yaml")
    schema = OmegaConf.structured(TrainConfig)
    cfg = to_train_config(OmegaConf.merge(schema, OmegaConf.load(config / "train.yaml")))
    path = str(verl.actor_rollout_ref.model.path)  # the CPU path's tiny model is local
    try:
        shape = resolve_shape(path, cfg.model.shape, cfg.model.name)
    except ShapeError as exc:
        return None, f"plan: none ({exc})"
    bounds = (
        f"exit 0 needs each compared phase's plan within -{PLAN_BELOW:.0%}/+{PLAN_ABOVE:.0%} "
        f"of the measured peak (the plan itself keeps a {MARGIN:.0%} margin below the GPU)"
    )
    if smoke.gpu is None:
        import psutil

        ram = psutil.virtual_memory().total / GIB
        plans = _plans(verl, shape, "CPU", ram)
        note = (
            "plan: the GPU plan of this shape and these settings, printed for reference; on a "
            "CPU the measure is not device memory (fp32, no vLLM), so nothing is compared; "
            "on a GPU " + bounds
        )
        return plans, note
    gpu = this_machine_gpu(cfg)
    if isinstance(gpu, str):
        return None, f"plan: none ({gpu})"
    plans = _plans(verl, shape, gpu[0], gpu[1])
    strategy = plans[0].inputs.strategy
    return plans, f"plan: {strategy}, {shape.params / 1e9:.2f}B params; {bounds}"


def _plans(verl: Any, shape: Any, name: str, gib: float) -> tuple[Any, Any]:
    from dataclasses import replace

    from codefu_trainer.training.planning.inputs import plan_inputs
    from codefu_trainer.training.planning.memory import make_plan

    inputs = plan_inputs(verl, shape, name, gib)
    return make_plan(inputs, shape), make_plan(replace(inputs, optimizer_stepped=False), shape)
