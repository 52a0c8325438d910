"""Every bad input to the trainer package's commands (`codefu-train`, `codefu-eval`,
`codefu-reward`) is refused before slow work starts: the documented exit code (README
"Exit codes": 2 for a configuration error or an unreadable input), one line on stderr
naming the value and the fix, no traceback, no file left behind (no run directory)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from codefu_trainer.evaluation.cli import main as eval_main
from codefu_trainer.reward.cli import main as reward_main
from codefu_trainer.training.cli import main as train_main

from ..conftest import CONF, write_prepared

TRAIN = ["--config-dir", str(CONF), "cluster=cpu", "data.out_dir=prepared"]
EVAL = ["--config-dir", str(CONF), "cluster=cpu", "data.out_dir=prepared"]
SCORE = ["score", "--data", "prepared/easy/train.parquet", "--responses", "responses.jsonl"]
SCORE_OUT = [*SCORE, "--out", "scores.jsonl"]

Main = Callable[[Sequence[str]], int]
CASES: dict[str, tuple[Main, list[str], str]] = {
    # codefu-train: paths
    "train: missing data.source (the issue's case)": (
        train_main,
        [*TRAIN, "data.source=/nonexistent/path"],
        "data.source=/nonexistent/path: unknown source",
    ),
    "train --check: missing data.source": (
        train_main,
        ["--check", *TRAIN, "data.source=/nonexistent/path"],
        "data.source=/nonexistent/path: unknown source",
    ),
    "train: data.source of an unknown type": (
        train_main,
        [*TRAIN, "data.source=notes.txt"],
        "unsupported file type '.txt'",
    ),
    "train: corrupt prepared data": (
        train_main,
        [*TRAIN[:-1], "data.out_dir=corrupt"],
        "train.parquet: not a readable parquet file",
    ),
    "train: missing config dir": (train_main, ["--config-dir", "nope"], "No train.yaml in"),
    # codefu-train: groups, keys, types, ranges
    "train: unknown cluster": (train_main, [*TRAIN, "cluster=cpux"], "did you mean 'cpu'?"),
    "train: unknown model": (train_main, [*TRAIN, "model=tinyy"], "did you mean 'tiny'?"),
    "train: not an override": (train_main, [*TRAIN, "steps"], "Cannot read override 'steps'"),
    # (test_train_config.py has the suggestions for more misspelled keys of both stages)
    "train: misspelled veRL key": (
        train_main,
        [*TRAIN, "trainer.totl_steps=3"],
        "'trainer.total_training_steps'",
    ),
    "train: wrong type": (train_main, [*TRAIN, "rehearsal.steps=abc"], "rehearsal.steps=abc"),
    "train: zero steps": (train_main, [*TRAIN, "rehearsal.steps=0"], "rehearsal.steps=0: use"),
    "train: reward sign": (train_main, [*TRAIN, "rehearsal.reward_sign=2"], "use 1 or -1"),
    "train: odd generation batch": (
        train_main,
        [*TRAIN, "rehearsal.prompts_per_step=1", "rehearsal.num_generations=3"],
        "must be a multiple of 2",
    ),
    # codefu-eval
    "eval: misspelled key": (eval_main, [*EVAL, "eval.sampels=3"], "'eval.samples'"),
    "eval: wrong type": (eval_main, [*EVAL, "eval.samples=abc"], "eval.samples=abc"),
    "eval: zero samples": (eval_main, [*EVAL, "eval.samples=0"], "eval.samples must be"),
    "eval: unknown data option": (eval_main, [*EVAL, "data=bogus"], "'bogus' is not an option"),
    "eval: compare of missing directories": (
        eval_main,
        ["compare", "nope_a", "nope_b"],
        "nope_a is not an evaluation directory",
    ),
    "eval: compare confidence out of range": (
        eval_main,
        ["compare", "nope_a", "nope_b", "--confidence", "2"],
        "--confidence within (0, 1)",
    ),
    # codefu-reward
    "reward: missing data": (
        reward_main,
        ["score", "--data", "nope.parquet", "--responses", "responses.jsonl", "--out", "s.jsonl"],
        "nope.parquet: no such file",
    ),
    "reward: garbage data": (
        reward_main,
        ["score", "--data", "garbage.parquet", "--responses", "responses.jsonl", "--out", "s"],
        "garbage.parquet: not a processed dataset parquet",
    ),
    "reward: garbage responses": (
        reward_main,
        [*SCORE[:-1], "notes.txt", "--out", "scores.jsonl"],
        "notes.txt:1: not valid JSON",
    ),
    "reward: binary responses": (
        reward_main,
        [*SCORE[:-1], "binary.jsonl", "--out", "scores.jsonl"],
        "binary.jsonl: not a readable UTF-8 JSONL file",
    ),
    "reward: out is a directory": (reward_main, [*SCORE, "--out", "prepared"], "is a directory"),
    "reward: out under a file": (reward_main, [*SCORE, "--out", "notes.txt/s"], "not a writable"),
    "reward: misspelled setting": (reward_main, [*SCORE_OUT, "mod=power"], "did you mean 'mode'"),
    "reward: bad value": (reward_main, [*SCORE_OUT, "mode=bogus"], "Invalid value 'bogus'"),
    "reward: wrong type": (
        reward_main,
        [*SCORE_OUT, "worker.num_workers=abc"],
        "worker.num_workers=abc",
    ),
    "reward: zero workers": (reward_main, [*SCORE_OUT, "--workers", "0"], "--workers must be"),
    "reward: unknown reward option": (
        reward_main,
        [*SCORE_OUT, "--reward", "bogus"],
        "reward/bogus.yaml not found",
    ),
}


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding good and bad inputs; the commands run in it, so a run
    directory or output they made would show here."""
    write_prepared(tmp_path / "prepared", train=4, test=2)
    (tmp_path / "corrupt" / "easy").mkdir(parents=True)
    for split in ("train", "test"):
        (tmp_path / "corrupt" / "easy" / f"{split}.parquet").write_bytes(b"PAR1 broken")
    (tmp_path / "notes.txt").write_text("notes\n")
    (tmp_path / "garbage.parquet").write_bytes(b"PAR1 broken")
    (tmp_path / "binary.jsonl").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "responses.jsonl").write_text('{"name": "0_A. Sum", "response": "x"}\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))  # caches (~/.cache) would show here too
    return tmp_path


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_input_is_one_line_and_exit_2(
    case: str, inputs: Path, refused: Callable[..., None]
) -> None:
    main, argv, names = CASES[case]
    refused(main, argv, names, inputs)
