"""veRL rollout backend `hf`: an async server generating with transformers, on the GPU where
there is one, else on the CPU.

veRL's rollout backends (vLLM, SGLang, TensorRT-LLM) need a GPU and their own packages. This
backend plugs into the same places, laid out as theirs are, and runs wherever transformers
does: `rollout.name=hf` on a CPU-only machine (cluster=cpu_verl), and on a GPU machine
without vLLM (`codefu-train --smoke`).

- `HFServer`: the Ray actor veRL's agent loop sends token-in/token-out `generate`
  requests to (through veRL's load balancer). Requests arriving together (until none has
  come for BATCH_QUIET_S, at most BATCH_WAIT_S after the first) are generated as one
  left-padded batch with `model.generate`, which prints one line per batch (requests, tokens,
  seconds, ms per token); each response token's log-prob is computed from the raw logits at
  the request's temperature, as veRL's actor computes it (so `training/rollout_probs_diff_max`
  measures the weight sync), one generated position at a time. Responses carry the step of
  the weights that produced them (`extra_fields["global_steps"]`), which veRL's trainer reads.
  On a GPU (the first one the actor sees) the model is bf16 and `sleep` moves it to the CPU
  between rollouts, as vLLM frees its memory for the trainer; on a CPU it is fp32 and stays.
- `HFReplica`: veRL's `RolloutReplica` for it (registered in veRL's replica registry):
  starts one server per replica.
- `HFRollout`: the adapter veRL's actor worker builds (`get_rollout_class`): the actor's
  weights after each update go to the server through the Ray object store (veRL's `naive`
  checkpoint-engine path: `engine.get_per_tensor_param()` → `update_weights`), in the
  server's dtype (bf16 on a GPU: half the bytes of the actor's fp32).

For smoke-size models: one process holds the whole model; no tensor parallelism, no
KV-cache reuse across requests.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import AsyncGenerator, Generator
from dataclasses import dataclass, field
from typing import Any

import ray
import torch
from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutReplica, TokenOutput
from verl.workers.rollout.utils import ensure_async_iterator

logger = logging.getLogger(__name__)

# How a batch gathers: the agent loop sends a step's requests concurrently, one Ray call each,
# and they arrive spread over tens of milliseconds. A batch waits until no request has come for
# BATCH_QUIET_S, and at most BATCH_WAIT_S after its first; whatever arrives later waits for
# the next batch, a whole `generate` later.
BATCH_QUIET_S = 0.2
BATCH_WAIT_S = 2.0
# Torch threads of the server's generation (0: torch's default). On a 2-core machine the
# trainer and the rollout take turns, so both may use every core.
THREADS_ENV = "CODEFU_HF_ROLLOUT_THREADS"


def server_name(replica_rank: int, suffix: str = "") -> str:
    """The Ray actor name of a replica's server (the adapter finds it by this name)."""
    return f"hf_rollout_server_{replica_rank}{suffix}"


def rollout_device() -> torch.device:
    """The server's device: the first GPU this process sees, else the CPU."""
    return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")


def rollout_dtype(device: torch.device) -> torch.dtype:
    """The server's weights: bf16 on a GPU, fp32 on a CPU."""
    return torch.bfloat16 if device.type == "cuda" else torch.float32


@dataclass
class _Request:
    prompt_ids: list[int]
    max_tokens: int
    future: asyncio.Future[TokenOutput] = field(repr=False)
    arrived: float = field(default_factory=time.monotonic)


def sampling_key(params: dict[str, Any]) -> tuple[float, float, int, float]:
    """Requests with the same key are generated in one batch."""
    return (
        float(params.get("temperature", 1.0)),
        float(params.get("top_p", 1.0)),
        int(params.get("top_k", -1)),
        float(params.get("repetition_penalty", 1.0)),
    )


def token_log_probs(logits: torch.Tensor, tokens: torch.Tensor, temperature: float) -> torch.Tensor:
    """log p(token) under softmax(logits / temperature) (greedy: temperature 0 → 1).

    logits (batch, steps, vocab), tokens (batch, steps) → (batch, steps). veRL's actor
    divides by the same temperature, so both sides compute the same quantity.
    """
    scaled = logits.float() / (temperature if temperature > 0 else 1.0)
    return torch.log_softmax(scaled, dim=-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


class HFServer:
    """The generation server of one `hf` replica (a Ray actor; async methods)."""

    def __init__(self, config: Any, model_config: Any, replica_rank: int) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from verl.utils.config import omega_conf_to_dataclass
        from verl.workers.config import HFModelConfig, RolloutConfig

        self.config: RolloutConfig = omega_conf_to_dataclass(config)
        self.model_config: HFModelConfig = omega_conf_to_dataclass(
            model_config, dataclass_type=HFModelConfig
        )
        self.replica_rank = replica_rank
        threads = int(os.environ.get(THREADS_ENV, "0"))
        if threads > 0:
            torch.set_num_threads(threads)
        torch.manual_seed(int(getattr(self.config, "seed", 0) or 0) + replica_rank)
        path = self.model_config.local_path or self.model_config.path
        self.device = rollout_device()
        self.model = AutoModelForCausalLM.from_pretrained(
            path,
            dtype=rollout_dtype(self.device),
            trust_remote_code=self.model_config.trust_remote_code,
            attn_implementation="sdpa",
        ).eval()
        self.model.to(self.device)
        tok_path = self.model_config.local_tokenizer_path or path
        tokenizer = AutoTokenizer.from_pretrained(
            tok_path, trust_remote_code=self.model_config.trust_remote_code
        )
        eos = self.model.generation_config.eos_token_id
        eos_ids = eos if isinstance(eos, list) else [eos] if eos is not None else []
        if tokenizer.eos_token_id is not None:
            eos_ids.append(tokenizer.eos_token_id)
        if not eos_ids:
            raise ValueError(f"{path}: neither its generation config nor its tokenizer names EOS.")
        self.eos_ids = sorted(set(eos_ids))
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else self.eos_ids[0])
        self.global_steps: int | None = None
        self.weight_updates = 0
        self._pending: dict[tuple[float, float, int, float], list[_Request]] = {}
        # The batching task lives only while requests wait, in the loop that made them; the
        # server holds no asyncio primitive across calls, so no state is bound to one loop.
        self._worker: asyncio.Task[None] | None = None
        # Generation vs. weight updates: held inside the worker threads that do them.
        self._model_lock = threading.Lock()

    # --- generation ---------------------------------------------------------------------

    async def generate(
        self,
        prompt_ids: list[int],
        sampling_params: dict[str, Any],
        request_id: str,
        image_data: Any = None,
        video_data: Any = None,
        **kwargs: Any,
    ) -> TokenOutput:
        """Sample one response to `prompt_ids` (token ids in, token ids and log-probs out)."""
        if image_data or video_data:
            raise NotImplementedError("the hf rollout generates from text prompts only.")
        budget = self.config.prompt_length + self.config.response_length - len(prompt_ids)
        max_tokens = max(0, min(self.config.response_length, budget))
        if "max_tokens" in sampling_params:
            max_tokens = min(max_tokens, int(sampling_params["max_tokens"]))
        if "max_new_tokens" in sampling_params:
            max_tokens = min(max_tokens, int(sampling_params["max_new_tokens"]))
        loop = asyncio.get_running_loop()
        future: asyncio.Future[TokenOutput] = loop.create_future()
        key = sampling_key(sampling_params)
        self._pending.setdefault(key, []).append(_Request(list(prompt_ids), max_tokens, future))
        worker = self._worker
        if worker is None or worker.done() or worker.get_loop() is not loop:
            self._worker = loop.create_task(self._serve())
        return await future

    async def _gather(self) -> None:
        """Wait until no request has arrived for BATCH_QUIET_S (at most BATCH_WAIT_S)."""
        start = time.monotonic()
        while time.monotonic() - start < BATCH_WAIT_S:
            last = max((r.arrived for rs in self._pending.values() for r in rs), default=start)
            quiet = time.monotonic() - last
            if quiet >= BATCH_QUIET_S:
                return
            await asyncio.sleep(BATCH_QUIET_S - quiet)

    async def _serve(self) -> None:
        """Generate the waiting requests batch by batch, then end (the next request restarts it)."""
        await self._gather()  # let the step's other requests join the batch
        while self._pending:
            key, batch = next(iter(self._pending.items()))
            del self._pending[key]
            try:
                outputs = await asyncio.to_thread(self._generate_batch, key, batch)
            except Exception as exc:  # every waiting request learns why
                for req in batch:
                    if not req.future.done():
                        req.future.set_exception(exc)
                continue
            for req, out in zip(batch, outputs, strict=True):
                if not req.future.done():
                    req.future.set_result(out)

    def _generate_batch(
        self, key: tuple[float, float, int, float], batch: list[_Request]
    ) -> list[TokenOutput]:
        with self._model_lock:  # a weight update waits for the batch, and the batch for it
            return self._generate_locked(key, batch)

    @torch.no_grad()
    def _generate_locked(
        self, key: tuple[float, float, int, float], batch: list[_Request]
    ) -> list[TokenOutput]:
        from transformers import GenerationConfig

        temperature, top_p, top_k, repetition_penalty = key
        width = max(len(r.prompt_ids) for r in batch)
        ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for i, r in enumerate(batch):  # left padding: every prompt ends at the same column
            ids[i, width - len(r.prompt_ids) :] = torch.tensor(r.prompt_ids)
            mask[i, width - len(r.prompt_ids) :] = 1
        max_new = max(r.max_tokens for r in batch)
        if max_new == 0:
            return [self._output([], []) for _ in batch]
        sample = temperature > 0
        gen = GenerationConfig(
            do_sample=sample,
            temperature=temperature if sample else None,
            top_p=top_p if sample else None,
            top_k=(top_k if top_k > 0 else None) if sample else None,
            repetition_penalty=repetition_penalty,
            max_new_tokens=max_new,
            eos_token_id=self.eos_ids,
            pad_token_id=self.pad_id,
            return_dict_in_generate=True,
            output_logits=True,
        )
        if self.model.device != self.device:  # put to sleep and not woken: a batch wakes it
            self.model.to(self.device)
        ids, mask = ids.to(self.device), mask.to(self.device)
        start = time.monotonic()
        out = self.model.generate(input_ids=ids, attention_mask=mask, generation_config=gen)
        new = out.sequences[:, width:]
        # One position at a time: the (batch, vocab) logits of each, never all of them stacked.
        log_probs = torch.stack(
            [
                token_log_probs(step[:, None, :], new[:, t : t + 1], temperature)[:, 0]
                for t, step in enumerate(out.logits)
            ],
            dim=1,
        ).cpu()
        new = new.cpu()
        seconds = time.monotonic() - start
        del out
        print(
            f"hf rollout: {len(batch)} requests, prompts of up to {width} tokens, "
            f"{new.shape[1]} new tokens in {seconds:.2f} s "
            f"({1000 * seconds / max(1, new.shape[1]):.1f} ms a token) on {self.device}",
            flush=True,
        )
        results = []
        for i, r in enumerate(batch):
            tokens = new[i, : r.max_tokens].tolist()
            for j, t in enumerate(tokens):
                if t in self.eos_ids:  # the response ends with its EOS token
                    tokens = tokens[: j + 1]
                    break
            results.append(self._output(tokens, log_probs[i, : len(tokens)].tolist()))
        return results

    def _output(self, tokens: list[int], log_probs: list[float]) -> TokenOutput:
        return TokenOutput(
            token_ids=tokens,
            log_probs=log_probs,
            stop_reason="completed",
            extra_fields={"global_steps": self.global_steps},
        )

    # --- weights ------------------------------------------------------------------------

    async def update_weights(
        self, named_tensors: dict[str, torch.Tensor], global_steps: int | None
    ) -> int:
        """Load the actor's weights (HF names); returns how many tensors were loaded."""
        return await asyncio.to_thread(self._load, named_tensors, global_steps)

    def _load(self, named_tensors: dict[str, torch.Tensor], global_steps: int | None) -> int:
        with self._model_lock:  # the weights and their step change together, between batches
            loaded = self._load_tensors(named_tensors)
            if global_steps is not None:
                self.global_steps = global_steps
            self.weight_updates += 1
        return loaded

    def _load_tensors(self, named_tensors: dict[str, torch.Tensor]) -> int:
        # state_dict names tied weights (lm_head.weight = the embedding) under both names.
        params = self.model.state_dict(keep_vars=True)
        unknown = sorted(set(named_tensors) - set(params))
        if unknown:
            raise KeyError(
                f"hf rollout: the actor sent weights the rollout model does not have: "
                f"{unknown[:5]} (of {len(unknown)}); are both the same architecture?"
            )
        with torch.no_grad():
            for name, tensor in named_tensors.items():
                params[name].copy_(tensor.to(params[name].dtype))
        return len(named_tensors)

    async def set_global_steps(self, global_steps: int) -> None:
        self.global_steps = global_steps

    async def stats(self) -> dict[str, Any]:
        """What the server did: weight updates received, the step of its weights."""
        return {"weight_updates": self.weight_updates, "global_steps": self.global_steps}

    # --- memory and request control: only a GPU's memory is freed -----------------------

    async def wake_up(self) -> None:
        """The model back on its GPU (a no-op on a CPU)."""
        await asyncio.to_thread(self._move, self.device)

    async def sleep(self) -> None:
        """On a GPU, the model to the CPU and the cached blocks freed while the trainer works."""
        if self.device.type == "cuda":
            await asyncio.to_thread(self._move, torch.device("cpu"))

    def _move(self, device: torch.device) -> None:
        with self._model_lock:
            self.model.to(device)
            if device.type == "cpu" and torch.cuda.is_available():
                torch.cuda.empty_cache()

    async def clear_kv_cache(self) -> None:
        pass

    async def release_kv_cache(self) -> None:
        pass

    async def resume_kv_cache(self) -> None:
        pass

    async def abort_all_requests(self, reject_request: bool = False) -> None:
        """Generation of a batch cannot be interrupted; weight updates wait for it (lock)."""

    async def resume_generation(self) -> None:
        pass

    async def start_profile(self, **kwargs: Any) -> None:
        pass

    async def stop_profile(self) -> None:
        pass


class HFReplica(RolloutReplica):
    """veRL's rollout replica for `hf`: one `HFServer` actor."""

    def rollout_worker_use_gpu(self) -> bool:
        return False

    async def launch_servers(self) -> None:
        if self.world_size != 1:
            raise ValueError(
                "rollout.name=hf runs one process per replica: set actor_rollout_ref.rollout."
                "tensor_model_parallel_size=1 (and data/pipeline parallel sizes 1)."
            )
        name = server_name(self.replica_rank, self.name_suffix)
        actor = ray.remote(HFServer).options(
            name=name,
            num_cpus=0,  # it takes turns with the trainer's processes (and shares their GPU)
            max_concurrency=self.max_concurrency,
            runtime_env={"env_vars": {THREADS_ENV: os.environ.get(THREADS_ENV, "0")}},
        )
        server = actor.remote(self.config, self.model_config, self.replica_rank)
        await server.stats.remote()  # raises here if the model failed to load
        self.servers = [server]
        self._server_handle = server
        self._server_address = name


class HFRollout(BaseRollout):
    """The actor worker's side of `hf`: sends the trained weights to its replica's server."""

    def __init__(
        self, config: Any, model_config: Any, device_mesh: Any, *args: Any, **kwargs: Any
    ) -> None:
        super().__init__(config, model_config, device_mesh)
        self.replica_rank = (
            int(device_mesh["dp"].get_local_rank()) if device_mesh is not None else 0
        )
        self._server: Any = None

    def _server_handle(self) -> Any:
        if self._server is None:
            self._server = ray.get_actor(server_name(self.replica_rank))
        return self._server

    async def resume(self, tags: list[str]) -> None:
        """Before a weight sync veRL resumes the rollout's weights (its replicas' `sleep` put
        the server's model on the CPU): the model back on its GPU (`HFServer.wake_up`)."""
        if "weights" in tags:
            await self._server_handle().wake_up.remote()

    async def release(self) -> None:
        """The server frees its own memory (`HFServer.sleep`): nothing to do here."""

    async def update_weights(
        self,
        weights: Generator[tuple[str, torch.Tensor], None, None]
        | AsyncGenerator[tuple[str, torch.Tensor], None],
        wire_format: str = "named_tensors",
        **kwargs: Any,
    ) -> None:
        if wire_format != "named_tensors":
            raise ValueError(
                f"the hf rollout takes full named tensors, not {wire_format!r}: use "
                "actor_rollout_ref.rollout.checkpoint_engine.backend=naive."
            )
        if kwargs.get("peft_config") is not None:
            raise NotImplementedError("the hf rollout does not load LoRA adapters.")
        named: dict[str, torch.Tensor] = {}
        dtype = rollout_dtype(rollout_device())  # the server's, on the same machine
        async for name, tensor in ensure_async_iterator(weights):
            full = tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor
            # Converted where it lies, then copied (the Ray call serialises it when made).
            full = full.detach().to(dtype) if full.is_floating_point() else full.detach()
            named[name] = full.to("cpu").contiguous()
        await self._server_handle().update_weights.remote(named, kwargs.get("global_steps"))
