"""The rehearsal's starting policy: a tiny model warm-started on real programs, cached.

For each training problem the warm start teaches three responses in the prompts' language
(`data.language`): the problem's accepted program, a rejected one (CodeContests `solutions` /
`incorrect_solutions`, read through `codefu_data.solutions`), and the accepted program with
the last of its language's `closing_token` removed (C++: its last closing brace; Python:
its last parenthesis), which fails to compile. The
rejected and broken ones are taught twice as often as the accepted one (`WARM_START_COPIES`),
so the warm-started model samples all three, the accepted one the least, and GRPO has a real
choice with room to rise; the judge's reward must move it toward the accepted ones. A source
that ships accepted programs only (TACO, APPS) teaches the accepted and the broken one.

A source that ships no programs (LiveCodeBench) gives the warm start nothing to teach: its
problems join the rehearsal as `rehearsal.problems_without_programs`, trained beside the
warm-started ones (a mixed set: `data.source=[lcb.jsonl,taco.jsonl]`), or alone with
`rehearsal.problems=0`, where the warm start is skipped.

The result depends only on the seed, the model shape, the warm-start settings and the
examples, so it is cached under `rehearsal.cache_dir/<hash of those>` (by default the
project's cache root's `rehearsal/`, `warm_start_cache`) and copied into the run directory
(`<run dir>/base_model`), which keeps a run self-contained.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from codefu_sandbox import default_cache_dir
from codefu_sandbox.languages import DEFAULT_LANGUAGE, get
from codefu_trainer.run.config import RehearsalConfig, TinyModelConfig
from codefu_trainer.run.overrides import ConfigError

# Bump when the warm start's code changes what a cached model would be.
WARM_START_VERSION = 2

# How many times each program of a problem is in the warm start's examples. With equal
# shares a warm-started policy could sample the accepted program most of the time from the
# first steps (seed 0: AC 0.79 at step 2), leaving the reward little to show.
WARM_START_COPIES = {"accepted": 1, "rejected": 2, "broken": 2}


def as_response(program: str) -> str:
    """A program as the policy's answer: in <code> tags, as the prompt asks."""
    return f"<code>\n{program.strip()}\n</code>"


def broken(program: str, language: str = DEFAULT_LANGUAGE) -> str:
    """The program without the last of its language's `closing_token` (C++: "}", a compile
    error; Python: ")", a SyntaxError at byte-compilation): a CE."""
    body = program.strip()
    closer = get(language).closing_token
    cut = body.rfind(closer)
    if cut < 0:
        raise ValueError(f"a {language} program without {closer!r} cannot be broken this way")
    return body[:cut] + body[cut + 1 :]


def select_problems(
    rows: Sequence[Mapping[str, Any]],
    source: str,
    r: RehearsalConfig,
    *,
    require_all: bool = True,
    language: str = DEFAULT_LANGUAGE,
) -> tuple[list[Mapping[str, Any]], list[tuple[Any, str]]]:
    """The first `r.problems` prompt rows that have an accepted program in `language` of at
    most `r.max_program_bytes` (and a rejected one, where the source ships rejected programs:
    CodeContests), then the first `r.problems_without_programs` rows that have no accepted
    program in `language`, and the warm-start examples (prompt, response) of the former.
    Fewer rows of either kind than asked for is an error unless `require_all` is false."""
    from codefu_data.solutions import solutions as read_solutions

    solutions = read_solutions(source, [str(row["name"]) for row in rows], language)
    ships_rejected = any(found.rejected for found in solutions.values())
    chosen: list[Mapping[str, Any]] = []
    untaught: list[Mapping[str, Any]] = []
    examples: list[tuple[Any, str]] = []
    for row in rows:
        if len(chosen) == r.problems and len(untaught) == r.problems_without_programs:
            break
        found = solutions.get(str(row["name"]))
        if found is None or not found.accepted:
            if len(untaught) < r.problems_without_programs:
                untaught.append(row)
            continue
        fits = [
            [p for p in programs if len(p.strip().encode()) <= r.max_program_bytes]
            for programs in (found.accepted, found.rejected)
        ]
        breakable = [p for p in fits[0] if get(language).closing_token in p]  # `broken` needs it
        if not breakable or (ships_rejected and not fits[1]) or len(chosen) == r.problems:
            continue
        chosen.append(row)
        programs = {"accepted": breakable[0], "broken": broken(breakable[0], language)}
        if fits[1]:
            programs["rejected"] = fits[1][0]
        examples += [
            (row["prompt"], as_response(programs[kind]))
            for kind, copies in WARM_START_COPIES.items()
            if kind in programs
            for _ in range(copies)
        ]
    if require_all and len(chosen) < r.problems:
        raise ConfigError(
            f"rehearsal.problems={r.problems}, but only {len(chosen)} training problems of data "
            f"source {source!r} have programs in {language} (data.language): an accepted one of "
            f"at most rehearsal.max_program_bytes={r.max_program_bytes} bytes. Lower "
            "rehearsal.problems or raise rehearsal.max_program_bytes. A source without "
            "programs (LiveCodeBench): mix in one that has them (data.source=[lcb.jsonl,"
            "taco.jsonl]) and add its problems with rehearsal.problems_without_programs=N, "
            "or set rehearsal.problems=0 to skip the warm start."
        )
    if require_all and len(untaught) < r.problems_without_programs:
        raise ConfigError(
            f"rehearsal.problems_without_programs={r.problems_without_programs}, but only "
            f"{len(untaught)} training problems of data source {source!r} have no accepted "
            f"program in {language} (data.language): lower it."
        )
    chosen += untaught
    prompts = [json.dumps(row["prompt"]) for row in chosen]
    if len(set(prompts)) < len(prompts):
        raise ConfigError(
            "two rehearsal problems have the same prompt after the cut to "
            "rehearsal.max_prompt_tokens characters: raise it so the model can tell them apart."
        )
    return chosen, examples


def warm_start_cache(r: RehearsalConfig) -> Path:
    """Where warm-started models are cached: `rehearsal.cache_dir`, else `rehearsal/` under
    the project's cache root ($CODEFU_CACHE_DIR, default ~/.cache/codefu)."""
    if r.cache_dir:
        return Path(r.cache_dir).expanduser()
    return default_cache_dir() / "rehearsal"


def cache_key(
    shape: TinyModelConfig, r: RehearsalConfig, examples: Sequence[tuple[Any, str]]
) -> str:
    """Hash of everything the warm-started model depends on."""
    spec = {
        "version": WARM_START_VERSION,
        "shape": asdict(shape),
        "seed": r.seed,
        "warmup_steps": r.warmup_steps,
        "warmup_lr": r.warmup_lr,
        "examples": examples,
    }
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def cached_base_model(
    shape: TinyModelConfig,
    r: RehearsalConfig,
    examples: Sequence[tuple[Any, str]],
    out_dir: Path,
) -> Path:
    """`out_dir` holding the warm-started tiny model: copied from the cache, or built, cached
    and copied. An existing complete `out_dir` (a resumed run) is kept as it is."""
    from codefu_trainer.run.progress import Heartbeat, Progress
    from codefu_trainer.training.rehearsal.tiny_model import warm_start, write_tiny_model

    if (out_dir / "config.json").is_file() and (out_dir / "tokenizer.json").is_file():
        return out_dir
    cache_root = warm_start_cache(r)
    cached = cache_root / cache_key(shape, r, examples)
    if (cached / "config.json").is_file():
        print(f"codefu-train: warm-started base model from the cache {cached}", flush=True)
    else:

        def warmup(model: Any, tok: Any) -> None:
            if r.warmup_steps <= 0 or not examples:
                return
            start = time.perf_counter()
            progress = Progress("codefu-train: warm start", r.warmup_steps)
            # A step slower than the progress lines' interval (a busy machine) still prints.
            with Heartbeat("codefu-train: warm start") as beat:

                def on_step(done: int, loss: float) -> None:
                    progress.update(done, loss=loss)
                    beat.mark(f"codefu-train: warm start: step {done + 1}/{r.warmup_steps}")

                losses = warm_start(
                    model,
                    tok,
                    examples,
                    steps=r.warmup_steps,
                    lr=r.warmup_lr,
                    seed=r.seed,
                    on_step=on_step,
                )
            print(
                f"codefu-train: warm start of the tiny model on {len(examples)} programs: "
                f"{len(losses)} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f} in "
                f"{time.perf_counter() - start:.1f}s (cached in {cached})",
                flush=True,
            )

        cache_root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache_root) as tmp:
            write_tiny_model(shape, Path(tmp) / "model", warmup, seed=r.seed)
            if not (cached / "config.json").is_file():  # another run may have finished first
                shutil.rmtree(cached, ignore_errors=True)
                (Path(tmp) / "model").rename(cached)
    shutil.copytree(cached, out_dir, dirs_exist_ok=True)
    return out_dir
