"""Generation backends: vLLM's offline engine on GPUs, transformers `generate` on CPU.

Both render a problem's chat messages with the model's chat template and generation prompt,
tokenized without extra special tokens (as veRL and TRL do for training); a prompt that is a
text for the model as it is (one message of role `TEXT_ROLE`: LiveCodeBench's DeepSeekR1
style) is tokenized as vLLM tokenizes a text prompt, with the tokenizer's own special
tokens. They decode without special tokens (as the reward sees responses in training),
sample with temperature and top-p and no top-k (veRL's rollout default), and stop at the
model's end of turn, at `eval.max_new_tokens`, at the end of the model's context, or at one
of `eval.stop`, whichever comes first; a response that reached a stop string ends before
it (vLLM's `stop`).

Every sample of a batch comes with its seed. vLLM samples each request with its own;
transformers samples the whole batch after seeding torch with the batch's first seed. Either
way the same batch with the same seeds gives the same samples, which is what a resumed
evaluation relies on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

from codefu_data.livecodebench_prompts import TEXT_ROLE
from codefu_trainer.evaluation.config import Backend, EvalConfig, EvalSettings
from codefu_trainer.run.cluster_kinds import cluster_kind
from codefu_trainer.run.compose import PrerequisiteError

Messages = Sequence[Mapping[str, str]]


@dataclass(frozen=True)
class Generated:
    """One response: its text, how many tokens the model generated, the seed it was sampled with."""

    text: str
    tokens: int
    seed: int


@dataclass(frozen=True)
class BackendChoice:
    """The backend, the device it runs on and its tensor parallel size."""

    backend: Backend
    device: str  # "cuda" or "cpu"
    tensor_parallel: int = 1

    @property
    def label(self) -> str:
        """`vllm-tp<N>`, `transformers-cpu` or `transformers-cuda`: part of the identity."""
        if self.backend is Backend.vllm:
            return f"vllm-tp{self.tensor_parallel}"
        return f"transformers-{self.device}"


class Generator(Protocol):
    choice: BackendChoice

    def generate(self, prompts: Sequence[Messages], seeds: Sequence[int]) -> list[Generated]: ...


def choose_backend(cfg: EvalConfig, gpus: int) -> BackendChoice:
    """`eval.backend` resolved on a machine with `gpus` visible NVIDIA GPUs."""
    use_gpu = gpus > 0 and cluster_kind(cfg.cluster).uses_gpus_here
    wanted = cfg.eval.backend
    if wanted is Backend.auto:
        wanted = Backend.vllm if use_gpu else Backend.transformers
    if wanted is Backend.transformers:
        return BackendChoice(Backend.transformers, "cuda" if use_gpu else "cpu")
    if not use_gpu:
        raise PrerequisiteError(
            "eval.backend=vllm needs an NVIDIA GPU and cluster=local; this machine has none "
            "visible (or cluster=cpu). Use eval.backend=auto or eval.backend=transformers."
        )
    tensor_parallel = cfg.cluster.gpus_per_node or gpus
    if tensor_parallel > gpus:
        raise PrerequisiteError(
            f"cluster.gpus_per_node={tensor_parallel} asks vLLM for tensor parallel "
            f"{tensor_parallel}, but {gpus} GPU(s) are visible here."
        )
    return BackendChoice(Backend.vllm, "cuda", tensor_parallel)


def vllm_engine_args(cfg: EvalConfig, model: str, choice: BackendChoice) -> dict[str, Any]:
    """Keyword arguments of `vllm.LLM` for this evaluation."""
    return {
        "model": model,
        "tokenizer": model,
        "tensor_parallel_size": choice.tensor_parallel,
        "trust_remote_code": cfg.model.trust_remote_code,
        "dtype": "auto",
        "seed": cfg.eval.seed,
        "gpu_memory_utilization": cfg.eval.gpu_memory_utilization,
        # The n samples of a problem share their prompt: its KV cache is computed once.
        "enable_prefix_caching": True,
    }


def vllm_sampling_args(settings: EvalSettings, seed: int, max_tokens: int) -> dict[str, Any]:
    """Keyword arguments of `vllm.SamplingParams` for one request."""
    return {
        "n": 1,
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "top_k": 0,
        "max_tokens": max_tokens,
        "seed": seed,
        "skip_special_tokens": True,
        "stop": list(settings.stop) or None,
    }


def token_budget(max_new_tokens: int, context: int | None, prompt_tokens: int) -> int:
    """New tokens allowed after a prompt: `max_new_tokens`, within the model's context."""
    if context is None:
        return max_new_tokens
    room = context - prompt_tokens
    if room < 1:
        raise PrerequisiteError(
            f"a prompt of {prompt_tokens} tokens leaves no room in the model's context of "
            f"{context} tokens; cut prompts with eval.max_prompt_chars=N."
        )
    return min(max_new_tokens, room)


def prompt_token_ids(tokenizer: Any, messages: Messages) -> list[int]:
    """The chat template with its generation prompt, tokenized without added special tokens;
    a text prompt (`TEXT_ROLE`) as it is, tokenized with the tokenizer's special tokens."""
    if len(messages) == 1 and messages[0].get("role") == TEXT_ROLE:
        return list(tokenizer(messages[0]["content"])["input_ids"])
    text = tokenizer.apply_chat_template(
        [dict(m) for m in messages], tokenize=False, add_generation_prompt=True
    )
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def before_stop(text: str, stops: Sequence[str]) -> str:
    """`text` up to the first occurrence of any of `stops` (all of it when none occurs)."""
    found = [i for i in (text.find(stop) for stop in stops) if i >= 0]
    return text[: min(found)] if found else text


def load_generator(cfg: EvalConfig, model: str, choice: BackendChoice) -> Generator:
    """The backend's generator with the model loaded; PrerequisiteError when it cannot load."""
    try:
        if choice.backend is Backend.vllm:
            return VllmGenerator(cfg, model, choice)
        return TransformersGenerator(cfg, model, choice)
    except OSError as exc:  # transformers: not found locally, no network for a hub id
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PrerequisiteError(f"could not load the model {model}: {reason}") from exc


class TransformersGenerator:
    """transformers `generate`, the batch left-padded (float32 on CPU)."""

    def __init__(self, cfg: EvalConfig, model: str, choice: BackendChoice) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        self.choice = choice
        self.settings = cfg.eval
        trust = cfg.model.trust_remote_code
        self.tokenizer = AutoTokenizer.from_pretrained(model, trust_remote_code=trust)
        dtype = torch.float32 if choice.device == "cpu" else "auto"
        loaded = AutoModelForCausalLM.from_pretrained(model, dtype=dtype, trust_remote_code=trust)
        self.model = cast(Any, loaded).to(choice.device).eval()
        self.eos = self.tokenizer.eos_token_id
        self.pad = (
            self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eos
        )
        self.context = getattr(self.model.config, "max_position_embeddings", None)

    def generate(self, prompts: Sequence[Messages], seeds: Sequence[int]) -> list[Generated]:
        import torch

        ids = [prompt_token_ids(self.tokenizer, p) for p in prompts]
        width = max(len(i) for i in ids)
        budget = token_budget(self.settings.max_new_tokens, self.context, width)
        batch = torch.full((len(ids), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for row, prompt in enumerate(ids):
            batch[row, width - len(prompt) :] = torch.tensor(prompt)
            mask[row, width - len(prompt) :] = 1
        sampling = self.settings.temperature > 0
        stops = list(self.settings.stop)
        torch.manual_seed(seeds[0])
        with torch.no_grad():
            out = self.model.generate(
                input_ids=batch.to(self.choice.device),
                attention_mask=mask.to(self.choice.device),
                max_new_tokens=budget,
                do_sample=sampling,
                temperature=self.settings.temperature if sampling else None,
                top_p=self.settings.top_p if sampling else None,
                top_k=0 if sampling else None,
                pad_token_id=self.pad,
                eos_token_id=self.eos,
                # Rows that reached a stop string stop early; the text is cut below.
                **({"stop_strings": stops, "tokenizer": self.tokenizer} if stops else {}),
            )
        results: list[Generated] = []
        for row in out[:, width:].tolist():
            end = row.index(self.eos) + 1 if self.eos in row else len(row)
            text = str(self.tokenizer.decode(row[:end], skip_special_tokens=True))
            results.append(Generated(before_stop(text, stops), end, seeds[0]))
        return results


class VllmGenerator:
    """vLLM's offline engine; each request carries its own seed."""

    def __init__(self, cfg: EvalConfig, model: str, choice: BackendChoice) -> None:
        try:
            from vllm import LLM
        except ImportError as exc:
            raise PrerequisiteError(
                "eval.backend=vllm needs vLLM: install codefu-trainer[train,gpu] (nox -s evaluate "
                f"does on a CUDA machine), or use eval.backend=transformers ({exc})."
            ) from exc
        self.choice = choice
        self.settings = cfg.eval
        self.llm = LLM(**vllm_engine_args(cfg, model, choice))
        self.tokenizer = self.llm.get_tokenizer()
        self.context = int(self.llm.model_config.max_model_len)

    def generate(self, prompts: Sequence[Messages], seeds: Sequence[int]) -> list[Generated]:
        from vllm import SamplingParams

        ids = [prompt_token_ids(self.tokenizer, p) for p in prompts]
        params = [
            SamplingParams(
                **vllm_sampling_args(
                    self.settings,
                    seed,
                    token_budget(self.settings.max_new_tokens, self.context, len(p)),
                )
            )
            for p, seed in zip(ids, seeds, strict=True)
        ]
        outputs = self.llm.generate([{"prompt_token_ids": p} for p in ids], params, use_tqdm=False)
        return [
            Generated(o.outputs[0].text, len(o.outputs[0].token_ids), seed)
            for o, seed in zip(outputs, seeds, strict=True)
        ]
