"""The CPU rehearsal end to end: steps, checkpoint, resume, metrics under veRL's names."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from codefu_trainer.reward.config import RewardConfig
from codefu_trainer.run.tracking import read_metrics
from codefu_trainer.training.cli import main
from codefu_trainer.training.rehearsal.loop import JudgeReward, latest_checkpoint, score_metrics

from ..conftest import APLUSB_OK, CONF
from ..source_rows import LIAR, RIGHT, ROWS, TACO_ROWS, WRONG, answer, write

VERL_KEYS = {
    "critic/score/mean",
    "critic/score/max",
    "critic/score/min",
    "actor/kl_loss",
    "actor/ppo_kl",
    "actor/pg_clipfrac",
    "actor/entropy",
    "response_length/mean",
    "judge/has_code",
    "judge/verdict/NO_CODE",
    "timing_s/step",
}


@pytest.fixture(scope="module")
def sample_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`nox -s prepare`'s output for the shipped sample (the rehearsal reads its programs)."""
    from codefu_data.config import DataConfig
    from codefu_data.prepare import prepare

    out = tmp_path_factory.mktemp("data") / "processed"
    return prepare(DataConfig(source="sample", out_dir=str(out)), progress=False, log=print).out_dir


def test_warm_start_teaches_the_accepted_program_least(sample_data: Path) -> None:
    """Per problem: the accepted program once, the rejected one and the broken accepted one
    twice each, so the warm-started policy starts with the accepted program the rarest."""
    from codefu_data.solutions import solutions
    from codefu_trainer.run.config import RehearsalConfig
    from codefu_trainer.run.prompt_rows import load_prompts
    from codefu_trainer.training.rehearsal.base_model import as_response, broken, select_problems

    assert broken("int main() { return 0; }\n") == "int main() { return 0; "
    prompts = load_prompts(sample_data / "easy" / "train.parquet", max_prompt_chars=160)
    rows, examples = select_problems(prompts, "sample", RehearsalConfig(problems=2))
    assert len(rows) == 2 and len(examples) == 10
    programs = solutions("sample", [str(row["name"]) for row in rows])
    for row in rows:
        found = programs[str(row["name"])]
        kinds = {
            **{as_response(p): "rejected" for p in found.rejected},
            **{as_response(broken(p)): "broken" for p in found.accepted},
            **{as_response(p): "accepted" for p in found.accepted},
        }
        taught = Counter(
            kinds.get(text, "other") for prompt, text in examples if prompt == row["prompt"]
        )
        assert taught == {"accepted": 1, "rejected": 2, "broken": 2}, taught


def test_the_warm_start_is_cached_under_CODEFU_CACHE_DIR_and_nowhere_in_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The main job's configuration (`train -- cluster=cpu`) with CODEFU_CACHE_DIR set caches
    its warm start there and writes nothing under the home folder."""
    from dataclasses import replace

    from codefu_trainer.run.config import TinyModelConfig
    from codefu_trainer.run.overrides import parse_override
    from codefu_trainer.training.compose import compose_stage1, to_train_config
    from codefu_trainer.training.rehearsal.base_model import cached_base_model, warm_start_cache

    root, home = tmp_path / "cache", tmp_path / "home"
    monkeypatch.setenv("CODEFU_CACHE_DIR", str(root))
    monkeypatch.setenv("HOME", str(home))
    cfg = to_train_config(compose_stage1(CONF, [parse_override("cluster=cpu")]))
    assert warm_start_cache(cfg.rehearsal) == root / "rehearsal"
    shape = TinyModelConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1)
    examples = [([{"role": "user", "content": "a+b"}], "<code>\nint main() {}\n</code>")]
    out = cached_base_model(
        shape, replace(cfg.rehearsal, warmup_steps=1), examples, tmp_path / "run" / "base_model"
    )
    (cached,) = (root / "rehearsal").iterdir()
    assert (cached / "config.json").is_file() and (out / "config.json").is_file()
    assert not home.exists()
    # Set alone, the warm start's folder wins over the root.
    alone = replace(cfg.rehearsal, cache_dir=str(tmp_path / "alone"))
    assert warm_start_cache(alone) == tmp_path / "alone"


def _overrides(data: Path, run_dir: Path, steps: int) -> list[str]:
    return [
        "--config-dir",
        str(CONF),
        "cluster=cpu",
        f"data.out_dir={data}",
        f"run.dir={run_dir}",
        f"rehearsal.steps={steps}",
        "rehearsal.prompts_per_step=2",
        "rehearsal.num_generations=2",
        "rehearsal.max_completion_tokens=24",
        "rehearsal.warmup_steps=5",
        f"rehearsal.cache_dir={run_dir.parent / 'cache'}",
        "model.tiny.hidden_size=32",
        "model.tiny.intermediate_size=64",
        "model.tiny.num_hidden_layers=1",
    ]


@pytest.mark.slow
@pytest.mark.ray
def test_rehearsal_runs_checkpoints_and_resumes(
    sample_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    assert main(_overrides(sample_data, run_dir, steps=1)) == 0
    first = capsys.readouterr().out
    assert "critic/score" not in first and "score" in first  # the per-step table
    ckpt = latest_checkpoint(run_dir / "checkpoints")
    assert ckpt is not None and ckpt.name == "checkpoint-2"  # 1 step = 2 PPO mini-batch updates
    assert (run_dir / "model" / "config.json").is_file()
    assert (run_dir / "config" / "train.yaml").is_file() and (
        run_dir / "config" / "verl.yaml"
    ).is_file()

    assert main(_overrides(sample_data, run_dir, steps=2)) == 0
    assert f"resuming from {ckpt}" in capsys.readouterr().out
    assert latest_checkpoint(run_dir / "checkpoints").name == "checkpoint-4"  # type: ignore[union-attr]
    records = read_metrics(run_dir)
    assert [r["step"] for r in records] == [1, 2]
    for record in records:
        assert set(record) >= VERL_KEYS, VERL_KEYS - set(record)
        assert (
            record["critic/score/min"] <= record["critic/score/mean"] <= record["critic/score/max"]
        )
        verdicts = sum(v for k, v in record.items() if k.startswith("judge/verdict/"))
        assert verdicts == pytest.approx(1.0)
    assert (run_dir / "mlflow.db").is_file()
    assert (run_dir / "plots" / "reward.png").is_file() and (
        run_dir / "plots" / "verdicts.png"
    ).is_file()
    import mlflow

    run_id = (run_dir / "mlflow_run_id.txt").read_text().strip()
    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{run_dir / 'mlflow.db'}")
    assert [m.step for m in client.get_metric_history(run_id, "critic/score/mean")] == [1, 2]


@pytest.mark.slow
@pytest.mark.ray
def test_judge_reward_scores_through_the_shared_reward_service(prepared_data: Path) -> None:
    """The rehearsal's reward function is RewardService: a right answer is AC, prose is no code."""
    import pyarrow.parquet as pq
    import ray

    from codefu_trainer.reward.service import RewardService

    row = pq.read_table(prepared_data / "easy" / "train.parquet").to_pylist()[1]
    truth = json.dumps(row["reward_model"]["ground_truth"])
    from codefu_trainer.run.local_ray import ray_temp_dir_outside_venv

    ray_temp_dir_outside_venv()  # under nox, TMPDIR lies inside the session's virtualenv
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    service = RewardService(RewardConfig())
    try:
        reward = JudgeReward(service)
        completions = [
            [{"role": "assistant", "content": APLUSB_OK}],
            [{"role": "assistant", "content": "hi"}],
        ]
        scores = reward(
            prompts=[row["prompt"]] * 2, completions=completions, ground_truth=[truth, truth]
        )
    finally:
        service.close()
        ray.shutdown()
    assert scores == [1.0, -1.0]
    metrics = score_metrics(reward.last)
    assert metrics["judge/verdict/AC"] == 0.5 and metrics["judge/verdict/NO_CODE"] == 0.5
    assert metrics["critic/score/max"] == 1.0 and metrics["critic/score/min"] == -1.0


@pytest.fixture(scope="module")
def python_sample_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped sample prepared with prompts that ask for Python 3."""
    from codefu_data.config import DataConfig
    from codefu_data.prepare import prepare

    out = tmp_path_factory.mktemp("data-python") / "processed"
    cfg = DataConfig(source="sample", out_dir=str(out), language="python")
    return prepare(cfg, progress=False, log=print).out_dir


def test_the_python_warm_start_teaches_python_programs(python_sample_data: Path) -> None:
    from codefu_trainer.run.config import RehearsalConfig
    from codefu_trainer.run.prompt_rows import load_prompts
    from codefu_trainer.training.rehearsal.base_model import broken, select_problems

    assert broken("print(max(xs) - min(xs))\n", "python") == "print(max(xs) - min(xs)"
    prompts = load_prompts(python_sample_data / "easy" / "train.parquet", max_prompt_chars=160)
    assert all("Python" in row["prompt"][0]["content"] for row in prompts)
    rows, examples = select_problems(prompts, "sample", RehearsalConfig(), language="python")
    assert [row["name"] for row in rows] == [
        "9001_A. Candy Split",
        "9001_B. Temperature Range",
        "9002_A. Vowelia",
    ]
    assert len(examples) == 15
    assert all("print(" in text and "#include" not in text for _, text in examples)
    with pytest.raises(Exception, match="programs in python"):
        select_problems(prompts, "sample", RehearsalConfig(problems=4), language="python")


@pytest.mark.slow
@pytest.mark.ray
# A 300-step warm start on Python programs, then 2 GRPO steps: past the suite's 900 s in the
# suite at a load average near 20 on 2 cores, 1,638 s alone at 10-16 (2026-11-28); its own
# limit, twice that, keeps a busy machine from failing it while a hang still ends.
@pytest.mark.timeout(3300)
def test_a_python_rehearsal_is_judged_in_python(python_sample_data: Path, tmp_path: Path) -> None:
    """Python prompts, a warm start on Python programs, the judge running them: the verdicts
    of accepted, wrong and broken (SyntaxError) programs, and no C++ at all."""
    run_dir = tmp_path / "run"
    args = [
        "--config-dir", str(CONF), "cluster=cpu", f"data.out_dir={python_sample_data}",
        "data.language=python", "reward.languages=[python]", f"run.dir={run_dir}",
        f"rehearsal.cache_dir={tmp_path / 'cache'}", "rehearsal.problems=2",
        "rehearsal.prompts_per_step=2", "rehearsal.steps=2", "run.tracking.mlflow=false",
    ]  # fmt: skip
    assert main(args) == 0
    records = read_metrics(run_dir)
    assert [r["step"] for r in records] == [1, 2]
    for record in records:
        assert record["judge/language/cpp"] == 0.0
        assert record["judge/language/python"] >= 0.9, record
        assert record["judge/verdict/LANGUAGE"] == 0.0
    assert sum(r["judge/verdict/AC"] for r in records) > 0, records
    assert sum(r["judge/verdict/CE"] for r in records) > 0, records


@pytest.fixture(scope="module")
def mixed_data(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A mixed Python set, prepared: LiveCodeBench rows (no programs; stdin and functional,
    all easy here so they share the training tier) and TACO call-based rows with their
    accepted programs. Returns the prepared folder and the raw files (data.source)."""
    from codefu_data.config import DataConfig
    from codefu_data.prepare import prepare

    root = tmp_path_factory.mktemp("mixed")
    lcb = write(root / "lcb.jsonl", [{**r, "difficulty": "easy"} for r in ROWS])
    taco = write(root / "taco.jsonl", TACO_ROWS)
    sources = [str(lcb), str(taco)]
    cfg = DataConfig(source=sources, out_dir=str(root / "processed"), language="python")
    return prepare(cfg, progress=False, log=print).out_dir, sources


def test_the_warm_start_of_a_mixed_set_teaches_only_the_programs_it_has(
    mixed_data: tuple[Path, list[str]],
) -> None:
    """TACO's call-based problems are taught their accepted program once and it broken twice
    (TACO ships no rejected ones); LiveCodeBench's join untaught, or are refused with what
    to set; with rehearsal.problems=0 nothing is taught."""
    from codefu_trainer.run.config import ModelKind, RehearsalConfig
    from codefu_trainer.run.overrides import ConfigError
    from codefu_trainer.run.prompt_rows import load_prompts
    from codefu_trainer.training.rehearsal.base_model import as_response, broken, select_problems
    from codefu_trainer.training.rehearsal.loop import warm_start_line

    data, sources = mixed_data
    prompts = load_prompts(data / "easy" / "train.parquet", max_prompt_chars=160)
    r = RehearsalConfig(problems=2, problems_without_programs=2)
    rows, examples = select_problems(prompts, sources, r, language="python")
    names = [str(row["name"]) for row in rows]
    taco = ["https://www.codewars.com/kata/largest", "https://www.codewars.com/kata/vowels"]
    assert names == [*taco, "abc001_a", "3301"]
    programs = {
        str(row["name"]): json.loads(row["ground_truth"]) for row in rows
    }  # the graders: TACO's and LiveCodeBench's functional one are calls
    assert [programs[n]["grader"]["name"] for n in names] == ["call", "call", "stdio", "call"]
    largest = "def largest(xs):\n    return max(xs)\n"
    taught = Counter(text for _, text in examples)
    assert taught[as_response(largest)] == 1
    assert taught[as_response(broken(largest, "python"))] == 2
    assert len(examples) == 6 and len(taught) == 4
    line = warm_start_line(rows, examples, r, ModelKind.tiny, "python")
    assert "teaches 6 programs in python of " + ", ".join(taco) in line
    assert "abc001_a, 3301 have none (rehearsal.problems_without_programs)" in line

    with pytest.raises(ConfigError, match=r"rehearsal\.problems_without_programs=N"):
        select_problems(prompts, sources, RehearsalConfig(problems=3), language="python")
    with pytest.raises(ConfigError, match=r"only 4 training problems .* have no accepted"):
        select_problems(
            prompts,
            sources,
            RehearsalConfig(problems=0, problems_without_programs=5),
            language="python",
        )
    lcb_only = RehearsalConfig(problems=0, problems_without_programs=3)
    rows, examples = select_problems(prompts, sources[:1], lcb_only, language="python")
    assert [str(row["name"]) for row in rows] == ["abc001_a", "3301", "2001_B"] and examples == []
    assert "warm start skipped" in warm_start_line(
        rows, examples, lcb_only, ModelKind.tiny, "python"
    )


def test_the_rehearsals_reward_judges_livecodebench_rows_by_their_graders(
    mixed_data: tuple[Path, list[str]],
) -> None:
    """The rehearsal's reward function on the mixed set's LiveCodeBench rows: the functional
    problem as a call (with its prelude: `List` unimported), the stdin ones by LiveCodeBench's
    comparison; right answers AC, wrong ones WA, an object equal to anything WA."""
    import pyarrow.parquet as pq

    from codefu_trainer.reward.service import RewardService

    data, _ = mixed_data
    rows = {
        r["extra_info"]["name"]: r
        for r in pq.read_table(data / "easy" / "train.parquet").to_pylist()
    }
    cases = [(q, RIGHT[q], "AC") for q in ("abc001_a", "3301", "2001_B")]
    cases += [(q, WRONG[q], "WA") for q in ("abc001_a", "3301", "2001_B")]
    cases += [("3301", LIAR, "WA")]
    service = RewardService(RewardConfig(languages=["python"]), local=True)
    try:
        reward = JudgeReward(service)
        scores = reward(
            prompts=[rows[q]["prompt"] for q, _, _ in cases],
            completions=[[{"role": "assistant", "content": answer(p)}] for _, p, _ in cases],
            ground_truth=[json.dumps(rows[q]["reward_model"]["ground_truth"]) for q, _, _ in cases],
        )
    finally:
        service.close()
    assert [r["verdict"] for r in reward.last] == [v for _, _, v in cases]
    assert scores[:3] == [1.0, 1.0, 1.0] and all(s < 1.0 for s in scores[3:])


@pytest.mark.slow
@pytest.mark.ray
def test_a_python_rehearsal_on_a_mixed_livecodebench_set_is_judged_by_the_call_grader(
    mixed_data: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two GRPO steps on the mixed set: TACO's call-based problems warm-started, LiveCodeBench's
    untaught beside them. Every answer is judged through its problem's grader (no
    JUDGE_ERROR): the call grader accepts the memorised call-based programs (AC) and the
    build rejects their broken copies (CE)."""
    data, sources = mixed_data
    run_dir = tmp_path / "run"
    args = [
        "--config-dir", str(CONF), "cluster=cpu", f"data.out_dir={data}",
        "data.source=[" + ",".join(f"'{s}'" for s in sources) + "]",
        "data.language=python", "reward.languages=[python]", f"run.dir={run_dir}",
        f"rehearsal.cache_dir={tmp_path / 'cache'}", "rehearsal.problems=2",
        "rehearsal.problems_without_programs=2", "rehearsal.prompts_per_step=4",
        "rehearsal.num_generations=4", "rehearsal.steps=2", "run.tracking.mlflow=false",
        # Six short programs: memorised by step 100 (loss 0.04; 0.015 at the default 300).
        "rehearsal.warmup_steps=100",
    ]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "abc001_a, 3301 have none (rehearsal.problems_without_programs)" in out
    records = read_metrics(run_dir)
    assert [r["step"] for r in records] == [1, 2]
    for record in records:
        assert record["judge/verdict/JUDGE_ERROR"] == 0.0, record
        assert record["judge/language/cpp"] == 0.0, record
    assert sum(r["judge/verdict/AC"] for r in records) > 0, records
    assert sum(r["judge/verdict/CE"] for r in records) > 0, records


def _rise(records: list[dict[str, float]], key: str, k: int) -> float:
    """Mean of `key` over the last k steps minus its mean over the first k."""
    values = [r[key] for r in records]
    return sum(values[-k:]) / k - sum(values[:k]) / k


@pytest.mark.slow
@pytest.mark.ray
# Two whole rehearsals (a 300-step warm start, then 2 × 10 GRPO steps): 160 s in the suite on
# 2 cores (2026-11-29, one OpenMP thread per process: the root conftest.py); the 8-step version
# on 2 problems took 564 s in the suite beside two CPU-bound processes and past 1,800 s at a
# load average near 20 (2026-11-27/28); its own limit keeps a busy machine from failing it
# while a hang still ends.
@pytest.mark.timeout(3700)
def test_the_judge_reward_moves_the_policy_to_accepted_programs(
    sample_data: Path, tmp_path: Path
) -> None:
    """The main job's rehearsal cut to 10 steps: the score and the AC share rise; with the
    reward's sign flipped (the control) the same start does not rise, so the rise comes from
    the reward.

    Three problems and 24 samples a step, as the main job: with 2 problems and 16 samples the AC
    share's rise over 8 steps was within the sampling noise of one step's 16 verdicts, and which
    side of 0.1 it fell on depended on the CPU's float kernels (0.04 on an Intel Xeon, where
    the score still rose by 0.21). Measured on that Xeon with one thread (as the suite runs
    it): AC share +0.35 (seed 0) and +0.39 (seed 1), the control's last 3 steps 0.63 and 0.67
    below; with two threads +0.42 and +0.38."""
    short = [
        "--config-dir",
        str(CONF),
        "cluster=cpu",
        f"data.out_dir={sample_data}",
        f"rehearsal.cache_dir={tmp_path / 'cache'}",
        "rehearsal.steps=10",
        "run.tracking.mlflow=false",
    ]
    assert main([*short, f"run.dir={tmp_path / 'up'}"]) == 0
    assert main([*short, f"run.dir={tmp_path / 'down'}", "rehearsal.reward_sign=-1"]) == 0
    up, down = read_metrics(tmp_path / "up"), read_metrics(tmp_path / "down")
    assert len(up) == len(down) == 10
    assert up[0]["critic/score/mean"] == down[0]["critic/score/mean"]  # same cached start
    score = "critic/score/mean"
    assert _rise(up, score, 3) > 0.1, up
    # The AC share rises and ends well above the control's.
    ac = "judge/verdict/AC"
    assert _rise(up, ac, 3) >= 0.1, up
    assert sum(r[ac] for r in up[-3:]) / 3 - sum(r[ac] for r in down[-3:]) / 3 >= 0.3, (up, down)
    assert _rise(down, score, 3) < 0.0, down
    assert sum(r[score] for r in up[-3:]) / 3 - sum(r[score] for r in down[-3:]) / 3 >= 0.5


def test_ray_temp_dir_moves_out_of_the_virtualenv(tmp_path: Path) -> None:
    from codefu_trainer.run.local_ray import ray_temp_dir_outside_venv

    venv = tmp_path / "venv"
    env = {"VIRTUAL_ENV": str(venv), "TMPDIR": str(venv / "tmp")}
    assert ray_temp_dir_outside_venv(env) == "/tmp"
    assert env["RAY_TMPDIR"] == "/tmp"
    elsewhere = {"VIRTUAL_ENV": str(venv), "TMPDIR": str(tmp_path / "t")}
    assert ray_temp_dir_outside_venv(elsewhere) is None
    assert "RAY_TMPDIR" not in elsewhere
