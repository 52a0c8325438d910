"""Everything the configuration and the files can tell is checked before torch, veRL or Ray
is imported: each refusal below comes with none of them loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from ..conftest import CONF

HEAVY = ("torch", "verl", "ray", "transformers", "vllm", "trl", "mlflow", "datasets")

# (command, arguments, exit code, a piece of the one-line message)
CASES = [
    ("train", ["cluster=cpu", "data.out_dir=/nonexistent"], 3, "No prepared data for tier"),
    ("train", ["cluster=cpu_verl", "data.out_dir=/nonexistent"], 3, "No prepared data for tier"),
    ("train", ["cluster=local", "data.out_dir=/nonexistent"], 3, "has none"),  # no GPU here
    ("train", ["cluster=cpu", "rehearsal.stepz=3"], 2, "did you mean 'rehearsal.steps'?"),
    ("train", ["cluster=cpu", "rehearsal.steps=many"], 2, "e.g. rehearsal.steps=20"),
    ("train", ["cluster=cpu", "rehearsal.num_generations=1"], 2, "rehearsal.num_generations=1"),
    ("train", ["cluster=cpu", "data.source=/nonexistent"], 2, "data.source=/nonexistent"),
    ("train", ["cluster=cpu", "model.kind=hf", "model.path=/nonexistent"], 2, "model=tiny"),
    ("train", ["cluster=local", "cluster.sagemaker.dry_run=false"], 2, "kind sagemaker"),
    ("train", ["cluster=sagemaker_p4de", "cluster.nnodes=2"], 2, "instance_count"),
    ("train", ["--smoke", "cluster=sagemaker_p4de"], 2, "the smoke runs on this machine"),
    ("eval", ["eval.samples=several"], 2, "e.g. eval.samples=10"),
    ("eval", ["cluster=cpu", "model.path=/nonexistent"], 3, "no such directory"),
    ("eval", ["cluster=cpu", "model.path={model}", "data.out_dir=/nonexistent"], 3, "No prepared"),
    ("eval", ["cluster=sagemaker_p4de"], 2, "codefu-eval generates on this machine"),
]

SCRIPT = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from codefu_trainer.evaluation.cli import main as evaluate
    from codefu_trainer.training.cli import main as train

    heavy, conf, cases = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
    results = []
    for command, args in cases:
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = (train if command == "train" else evaluate)(["--config-dir", conf, *args])
        results.append([code, err.getvalue(), [m for m in heavy if m in sys.modules]])
    print(json.dumps(results))
    """
)


def test_refusals_come_before_torch_verl_and_ray_are_imported(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    cases = [(cmd, [a.format(model=model) for a in args]) for cmd, args, _, _ in CASES]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(HEAVY), str(CONF), json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        cwd=tmp_path,
    )
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for (command, args, code, piece), (got, err, loaded) in zip(CASES, results, strict=True):
        case = f"{command} {' '.join(args)}: {err}"
        assert got == code, case
        (line,) = err.splitlines()
        assert piece in line, case
        assert loaded == [], f"{case} imported {loaded} before refusing"
        for internal in ("full_key", "object_type", "reference_type"):
            assert internal not in line, case
