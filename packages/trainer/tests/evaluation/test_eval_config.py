"""conf/eval.yaml: the same groups as training, typed eval.* keys, errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from codefu_trainer.evaluation.config import Backend, Split, compose_eval, eval_tiers
from codefu_trainer.evaluation.problems import prompt_char_limit
from codefu_trainer.run.config import ClusterKind, ModelKind
from codefu_trainer.run.overrides import ConfigError

from ..conftest import CONF


def test_defaults_compose_the_training_groups() -> None:
    cfg = compose_eval(CONF, [])
    assert cfg.cluster.kind is ClusterKind.local
    assert cfg.model.path == "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"
    assert (cfg.data.tier, cfg.reward.mode.value) == ("easy", "linear")
    e = cfg.eval
    assert (e.split, e.samples, list(e.k), e.backend) == (Split.test, 10, [1, 5, 10], Backend.auto)
    assert eval_tiers(cfg) == ["easy"]


def test_cluster_cpu_picks_the_tiny_model_and_keys_are_typed() -> None:
    cfg = compose_eval(
        CONF,
        [
            "cluster=cpu",
            "model.path=/runs/r/model",
            "data=hard",
            "eval.split=train",
            "eval.samples=4",
            "eval.k=[1,4]",
            "eval.tiers=[easy,expert]",
            "reward=all_or_nothing",
        ],
    )
    assert (cfg.model.kind, cfg.model.path) == (ModelKind.tiny, "/runs/r/model")
    assert cfg.eval.split is Split.train and cfg.eval.samples == 4
    assert eval_tiers(cfg) == ["easy", "expert"]
    assert cfg.reward.mode.value == "all_or_nothing"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "eval.sampels=3",
            "'sampels' is not a key of eval in conf/eval.yaml (did you mean 'eval.samples'?)",
        ),
        ("data=bogus", "'bogus' is not an option of the config group 'data'"),
        (
            "eval.tiers=[bogus]",
            "eval.tiers: 'bogus' is not a tier; choose from ['easy', 'expert', 'hard']",
        ),
        ("eval.k=[1,20]", "asks for pass@20 but eval.samples=10"),
        ("eval.split=valid", "eval.split"),
        ("cluster=sagemaker_p4de", "codefu-eval generates on this machine"),
        ("eval.batch_size=0", "eval.batch_size=0 must be at least 1"),
    ],
)
def test_bad_overrides_name_what_to_fix(override: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        compose_eval(CONF, [override])
    assert message in str(err.value)


def test_prompt_cut_follows_the_run_that_trained_a_tiny_model(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "config").mkdir(parents=True)
    (run / "config" / "train.yaml").write_text("rehearsal:\n  max_prompt_tokens: 96\n")
    tiny = compose_eval(CONF, ["cluster=cpu", f"model.path={run / 'model'}"])
    assert prompt_char_limit(tiny) == 96
    elsewhere = compose_eval(CONF, ["cluster=cpu", f"model.path={tmp_path / 'm'}"])
    assert prompt_char_limit(elsewhere) == 160  # the rehearsal's default
    assert prompt_char_limit(compose_eval(CONF, [])) is None  # a real model sees whole prompts
    explicit = compose_eval(CONF, ["cluster=cpu", "eval.max_prompt_chars=50"])
    assert prompt_char_limit(explicit) == 50
