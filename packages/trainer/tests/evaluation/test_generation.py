"""Generation backends: the vLLM configuration built from the config (checked on CPU), and
transformers generation with the tiny model."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

import pytest

from codefu_data.livecodebench_prompts import TEXT_ROLE
from codefu_trainer.evaluation.config import compose_eval
from codefu_trainer.evaluation.generation import (
    TransformersGenerator,
    VllmGenerator,
    before_stop,
    choose_backend,
    prompt_token_ids,
    token_budget,
    vllm_engine_args,
    vllm_sampling_args,
)
from codefu_trainer.run.compose import PrerequisiteError

from ..conftest import CONF

HAS_VLLM = importlib.util.find_spec("vllm") is not None


@pytest.mark.parametrize(
    ("overrides", "gpus", "label"),
    [
        ([], 0, "transformers-cpu"),
        ([], 2, "vllm-tp2"),
        (["cluster.gpus_per_node=4"], 8, "vllm-tp4"),
        (["cluster=cpu"], 8, "transformers-cpu"),
        (["eval.backend=transformers"], 1, "transformers-cuda"),
        (["eval.backend=vllm"], 1, "vllm-tp1"),
    ],
)
def test_backend_choice(overrides: list[str], gpus: int, label: str) -> None:
    assert choose_backend(compose_eval(CONF, overrides), gpus).label == label


@pytest.mark.parametrize(
    ("overrides", "gpus", "message"),
    [
        (["eval.backend=vllm"], 0, "eval.backend=vllm needs an NVIDIA GPU"),
        (["cluster=cpu", "eval.backend=vllm"], 4, "eval.backend=vllm needs an NVIDIA GPU"),
        (["cluster.gpus_per_node=4"], 2, "tensor parallel 4, but 2 GPU(s) are visible"),
    ],
)
def test_impossible_backends_are_refused(overrides: list[str], gpus: int, message: str) -> None:
    with pytest.raises(PrerequisiteError, match=re.escape(message)):
        choose_backend(compose_eval(CONF, overrides), gpus)


def test_vllm_engine_and_sampling_arguments_come_from_the_config() -> None:
    cfg = compose_eval(
        CONF,
        [
            "cluster.gpus_per_node=2",
            "model.trust_remote_code=true",
            "eval.seed=7",
            "eval.temperature=0.8",
            "eval.top_p=0.9",
            "eval.gpu_memory_utilization=0.7",
            "eval.stop=['###',END]",
        ],
    )
    choice = choose_backend(cfg, gpus=8)
    args = vllm_engine_args(cfg, "/models/m", choice)
    assert args == {
        "model": "/models/m",
        "tokenizer": "/models/m",
        "tensor_parallel_size": 2,
        "trust_remote_code": True,
        "dtype": "auto",
        "seed": 7,
        "gpu_memory_utilization": 0.7,
        "enable_prefix_caching": True,
    }
    sampling = vllm_sampling_args(cfg.eval, seed=123, max_tokens=100)
    assert sampling == {
        "n": 1,
        "temperature": 0.8,
        "top_p": 0.9,
        "top_k": 0,
        "max_tokens": 100,
        "seed": 123,
        "skip_special_tokens": True,
        "stop": ["###", "END"],
    }
    # LiveCodeBench's protocol stops at its runner's default stop string; ours at none.
    protocol = compose_eval(CONF, ["eval.protocol=livecodebench"])
    assert vllm_sampling_args(protocol.eval, seed=1, max_tokens=8)["stop"] == ["###"]
    assert vllm_sampling_args(compose_eval(CONF, []).eval, seed=1, max_tokens=8)["stop"] is None


def test_a_response_ends_before_its_first_stop_string() -> None:
    assert before_stop("code\n### Explanation\n###", ["###"]) == "code\n"
    assert before_stop("a END b ### c", ["###", "END"]) == "a "
    assert before_stop("no stop here", ["###"]) == "no stop here"
    assert before_stop("###", []) == "###"


@pytest.mark.skipif(not HAS_VLLM, reason="vLLM is not installed (CUDA machines only)")
def test_vllm_accepts_the_arguments() -> None:  # pragma: no cover - GPU machines
    from vllm import LLM, SamplingParams

    cfg = compose_eval(CONF, [])
    params = inspect.signature(LLM.__init__).parameters
    from vllm.engine.arg_utils import EngineArgs

    known = set(params) | {f.name for f in EngineArgs.__dataclass_fields__.values()}
    assert set(vllm_engine_args(cfg, "m", choose_backend(cfg, 1))) <= known
    SamplingParams(**vllm_sampling_args(cfg.eval, seed=1, max_tokens=8))


@pytest.mark.skipif(HAS_VLLM, reason="vLLM is installed")
def test_without_vllm_the_vllm_backend_says_what_to_install() -> None:
    cfg = compose_eval(CONF, ["eval.backend=vllm"])
    with pytest.raises(PrerequisiteError, match=r"install codefu-trainer\[train,gpu\]"):
        VllmGenerator(cfg, "/models/m", choose_backend(cfg, gpus=1))


def test_token_budget_stays_inside_the_context() -> None:
    assert token_budget(20480, None, 500) == 20480
    assert token_budget(20480, 2048, 500) == 1548
    assert token_budget(64, 2048, 500) == 64
    with pytest.raises(PrerequisiteError, match=r"eval\.max_prompt_chars"):
        token_budget(64, 2048, 2048)


def test_transformers_generation_is_seeded_per_batch(tiny_model: Path) -> None:
    cfg = compose_eval(CONF, ["cluster=cpu", f"model.path={tiny_model}", "eval.max_new_tokens=12"])
    generator = TransformersGenerator(cfg, str(tiny_model), choose_backend(cfg, gpus=0))
    prompts = [
        [{"role": "user", "content": "Print a+b."}],
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Sum two numbers, please."},
        ],
    ]
    first = generator.generate(prompts, [11, 12])
    assert generator.generate(prompts, [11, 12]) == first
    assert generator.generate(prompts, [99, 12]) != first
    assert [g.seed for g in first] == [11, 11]  # the batch is sampled from its first seed
    assert all(1 <= g.tokens <= 12 for g in first)
    tokenizer = generator.tokenizer
    ids = prompt_token_ids(tokenizer, prompts[0])
    assert (
        tokenizer.decode(ids) == "<|im_start|>user\nPrint a+b.<|im_end|>\n<|im_start|>assistant\n"
    )
    # A text prompt (LiveCodeBench's DeepSeekR1 style) is the text itself, no chat template.
    text = "<｜User｜>Question: add.<｜Assistant｜>"
    ids = prompt_token_ids(tokenizer, [{"role": TEXT_ROLE, "content": text}])
    assert ids == tokenizer(text)["input_ids"] and tokenizer.decode(ids) == text
    assert generator.generate([[{"role": TEXT_ROLE, "content": text}]], [5])[0].tokens >= 1
