"""conf/eval.yaml: the same groups as training, typed eval.* keys, errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from codefu_trainer.evaluation.config import (
    Backend,
    EvalSettings,
    Split,
    compose_eval,
    eval_tiers,
)
from codefu_trainer.evaluation.livecodebench import lcb_style
from codefu_trainer.evaluation.problems import prompt_char_limit
from codefu_trainer.run.config import ModelKind
from codefu_trainer.run.overrides import ConfigError

from ..conftest import CONF


def test_defaults_compose_the_training_groups() -> None:
    cfg = compose_eval(CONF, [])
    assert (cfg.eval.protocol, cfg.eval.prepare) == ("codefu", False)
    assert cfg.cluster.kind == "local"
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
        (
            "eval.protocol=lcb",
            "eval.protocol=lcb: no such protocol; choose one of codefu, livecodebench",
        ),
        # The protocol's k needs its n: a smaller n alone says what to change.
        ("eval.protocol=livecodebench eval.samples=2", "asks for pass@10 but eval.samples=2"),
        (
            "eval.protocol=livecodebench eval.lcb_style=chat",
            "eval.lcb_style=chat: no such LiveCodeBench model style; choose auto, generic, "
            "deepseek_r1",
        ),
        ("eval.release=release_v9", "eval.release=release_v9: LiveCodeBench has no such release"),
        ("eval.stop=['']", "eval.stop lists an empty string"),
    ],
)
def test_bad_overrides_name_what_to_fix(override: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        compose_eval(CONF, override.split())
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


def test_the_livecodebench_protocol_resolves_to_its_runners_defaults() -> None:
    """lcb_runner/runner/parser.py's defaults: --n 10, --temperature 0.2, --top_p 0.95,
    --max_tokens 2000, --timeout 6 (per test); Python answers; every difficulty; the file
    prepared from data.source; the settings a user overrides still win."""
    cfg = compose_eval(CONF, ["eval.protocol=livecodebench"])
    e = cfg.eval
    assert e.protocol == "livecodebench" and e.prepare
    assert (e.samples, e.temperature, e.top_p, e.max_new_tokens) == (10, 0.2, 0.95, 2000)
    assert 1 in e.k and max(e.k) <= e.samples
    assert cfg.data.default_time_limit_seconds == 6.0
    assert (cfg.data.format, cfg.data.language, list(cfg.reward.languages)) == (
        "livecodebench",
        "python",
        ["python"],
    )
    assert eval_tiers(cfg) == ["easy", "hard", "expert"]  # easy, medium, hard
    assert set(cfg.data.split_map.values()) == {"test"} and e.split is Split.test
    # The other settings are the defaults of a plain evaluation.
    # What a vLLM request on a GPU gets (generation.py), as LiveCodeBench's SamplingParams.
    from codefu_trainer.evaluation.generation import vllm_sampling_args

    request = vllm_sampling_args(e, seed=7, max_tokens=e.max_new_tokens)
    assert (request["temperature"], request["top_p"], request["max_tokens"]) == (0.2, 0.95, 2000)
    plain = EvalSettings()
    assert (e.seed, e.batch_size, e.backend) == (plain.seed, plain.batch_size, plain.backend)
    # Its stop string, its extract_code, its tests (examples first, to the first failure).
    assert list(e.stop) == ["###"] and e.release is None
    r = cfg.reward
    assert (r.extraction.value, r.include_public_tests, r.mode.value) == (
        "livecodebench",
        True,
        "all_or_nothing",
    )

    # An override wins over the protocol, even one written before it.
    overrides = ["eval.max_new_tokens=32768", "eval.samples=1", "eval.k=[1]"]
    changed = compose_eval(CONF, ["cluster=cpu", *overrides, "eval.protocol=livecodebench"])
    assert (changed.eval.max_new_tokens, changed.eval.samples) == (32768, 1)
    assert changed.eval.temperature == 0.2 and changed.eval.protocol == "livecodebench"


@pytest.mark.parametrize(
    ("model", "style"),
    [
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek_r1"),
        ("/models/DeepSeek-R1-0528", "deepseek_r1"),
        ("agentica-org/DeepCoder-14B-Preview", "deepseek_r1"),
        ("nvidia/Llama-3_1-Nemotron-Nano-8B-v1", "deepseek_r1"),
        ("Qwen/Qwen2.5-Coder-7B-Instruct", "generic"),
        ("runs/codefu-grpo-20261124/model", "generic"),
    ],
)
def test_the_livecodebench_style_follows_the_model(model: str, style: str) -> None:
    """eval.lcb_style=auto: LiveCodeBench's DeepSeekR1 style for the models it lists with R1,
    its generic chat style for the others."""
    assert lcb_style("auto", model) == style
    assert lcb_style("generic", model) == "generic"


def test_the_datas_prompts_follow_the_livecodebench_style() -> None:
    r1 = "model.path=deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"
    auto = compose_eval(CONF, ["eval.protocol=livecodebench", r1])
    assert (auto.eval.lcb_style, auto.data.prompt.style) == (
        "deepseek_r1",
        "livecodebench_deepseek_r1",
    )


def test_a_named_livecodebench_style_wins_and_other_protocols_keep_the_datas_prompts() -> None:
    r1 = "model.path=deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"
    named = compose_eval(CONF, ["eval.protocol=livecodebench", r1, "eval.lcb_style=generic"])
    assert (named.eval.lcb_style, named.data.prompt.style) == ("generic", "livecodebench")
    plain = compose_eval(CONF, [r1])
    assert (plain.eval.lcb_style, plain.data.prompt.style) == (None, "codefu")
