"""Typed configuration of `codefu-data prepare` (Hydra structured config).

`register_configs()` stores `DataConfig` in Hydra's ConfigStore as ``data/schema``; every
option file in ``conf/data/`` lists ``schema`` first in its defaults, so a misspelled key or
a wrong type in ``data.*`` is an error that names the key. The training side composes the
same ``conf/data`` group and reads ``data.tier`` / ``data.out_dir``.
"""

from __future__ import annotations

import datetime
import itertools
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore

from codefu_data import formats, livecodebench_prompts
from codefu_data.formats import DEFAULT_OPTIONS, ReadOptions
from codefu_sandbox.languages import DEFAULT_LANGUAGE, LANGUAGES, default_time_factors

# `data.checkers.language`: a checker's language told by its source (`checkers.detect_language`).
AUTO = "auto"
DEFAULT_INSTRUCTIONS = [
    "Write a C++ solution for this problem. Put your thought process in <think> tags "
    "and your solution in <code> tags.",
    "Write C++ code to solve this challenge. Use <think> tags for your analysis and <code> "
    "tags for your solution.",
    "Provide a C++ solution for this challenge. Show your thinking in <think> tags and "
    "solution in <code> tags.",
    "Solve this competitive programming task in C++. Document your thoughts in <think> tags "
    "and code in <code> tags.",
    "Help me solve this problem using C++. Explain your approach in <think> tags and provide "
    "the code in <code> tags.",
    "Here's a programming problem to solve in C++. Share your reasoning in <think> tags and "
    "your code in <code> tags.",
    "Develop a C++ solution for this problem. Place your reasoning in <think> tags and your "
    "code in <code> tags.",
    "Solve this coding challenge with C++. Include your reasoning within <think> tags and "
    "implementation within <code> tags.",
    "Please solve this programming problem in C++. Show your thinking process in <think> tags "
    "and your code solution in <code> tags.",
    "Create a C++ solution for this problem. Present your analysis in <think> tags and "
    "implementation in <code> tags.",
]
DEFAULT_PERSONAS = [
    "As a competitive programming expert",
    "Taking on the role of a skilled competitive coder",
    "In your role as an algorithmic problem-solver",
    "Working as an experienced competitive programmer",
    "As a master of algorithms and data structures",
]
# `data.prompt.style`: this project's prompts, or LiveCodeBench's per model style.
CODEFU_PROMPTS = "codefu"
PROMPT_STYLES = (CODEFU_PROMPTS, *livecodebench_prompts.STYLES)
DEFAULT_TEMPLATE = (
    "{instruction}\n\nProblem:\n{description}\n\n"
    "Time limit per test: {time_limit}\nMemory limit per test: {memory_limit}"
)


@dataclass
class TierRange:
    """Inclusive Codeforces rating range of one tier."""

    min_rating: int = 800
    max_rating: int = 1000


@dataclass
class PromptConfig:
    """How a problem becomes chat messages.

    `style`: `codefu`, this project's prompts (below), or LiveCodeBench's for a model style
    (`livecodebench`: its generic chat style; `livecodebench_deepseek_r1`: its text prompt for
    R1-like models; `codefu_data.livecodebench_prompts`), which use none of the settings
    below. `template` is a Python format string with the fields {instruction},
    {description}, {time_limit}, {memory_limit} and {name}. The instruction is one of
    `instructions`, chosen deterministically from the problem name and `seed`; with
    probability `persona_probability` it is prefixed by one of `personas` ("As an expert,
    write …").
    """

    style: str = CODEFU_PROMPTS
    template: str = DEFAULT_TEMPLATE
    instructions: list[str] = field(default_factory=lambda: list(DEFAULT_INSTRUCTIONS))
    personas: list[str] = field(default_factory=lambda: list(DEFAULT_PERSONAS))
    persona_probability: float = 0.5
    system: str = ""  # non-empty: a system message before the user message
    seed: int = 0


def _default_difficulty_tiers() -> dict[str, str]:
    """The tier of each difficulty label (docs/prepare.md, "Difficulty")."""
    return {
        "easy": "easy",  # LiveCodeBench, TACO
        "medium": "hard",  # LiveCodeBench, TACO
        "medium_hard": "hard",  # TACO
        "hard": "expert",  # LiveCodeBench, TACO
        "very_hard": "expert",  # TACO
        "introductory": "easy",  # APPS
        "interview": "hard",  # APPS
        "competition": "expert",  # APPS
    }


def _default_tiers() -> dict[str, TierRange]:
    return {
        "easy": TierRange(800, 1000),
        "hard": TierRange(1100, 2200),
        "expert": TierRange(2300, 3500),
    }


@dataclass
class CheckersConfig:
    """Per-problem checker programs (`codefu_data.checkers`).

    column: a dataset column holding a problem's checker source (null: none); language:
      its language (a judge language: cpp, python, ...), or "auto" (C++ when it has an
      #include, else Python). folder: a
      folder of `<name>.cpp`/`<name>.py` files (name mapped by `checker_file_stem`).
    testlib: the path of your testlib.h, for C++ checkers that include it.
    time_seconds / memory_bytes: a checker's own limits per test.
    min_tpr / min_tnr: the rates a checker must reach on the known programs, over at least
      min_accepted accepted and min_incorrect incorrect ones; max_programs of each kind run.
    """

    column: str | None = None
    language: str = AUTO
    folder: str | None = None
    testlib: str | None = None
    time_seconds: float = 10.0
    memory_bytes: int = 1 << 30
    min_tpr: float = 1.0
    min_tnr: float = 1.0
    min_accepted: int = 1
    min_incorrect: int = 1
    max_programs: int = 3
    workers: int = 0  # 0: the judge's default (usable CPUs)

    def enabled(self) -> bool:
        return bool(self.column or self.folder)


@dataclass
class DataConfig:
    """Everything that decides the processed dataset (all of it goes into the manifest).

    source: a local dir of parquet/JSONL files, a .parquet/.jsonl file, a hub id, "sample"
      for the raw dataset shipped in `codefu_data.sample`, or a list of files and dirs.
    format: the source format of its files (`codefu_data.formats`), or "auto": each file's
      format detected from its columns.
    date_from / date_to: the contest-date window (ISO dates, inclusive; null: open): only
      problems whose contest date falls in it are kept, the others are dropped as
      `outside_date_window` or `no_contest_date`; a window that selects nothing is an error.
    default_time_limit_seconds / default_memory_limit_bytes: the limits of a problem whose
      row states none (LiveCodeBench, APPS, DeepCoder; not CodeContests, whose rows must).
    difficulty_tiers: the tier of each difficulty label (lower case, `_` between words);
      a rated Codeforces problem is tiered by its rating, a labelled one by its label (a
      label mapped to no tier of `tiers` drops it: `difficulty_not_in_tiers`).
    out_dir: output root, relative to the current directory unless absolute.
    tier: the tier a training run uses (prepare always writes every tier in `tiers`).
    other_sources: rule for problems not from Codeforces (no cf_rating): "exclude" drops
      them (reason `not_codeforces`); a tier name puts them all in that tier.
    split_map: raw split → output split; `heldout_split` is the split that keeps
      cross-split duplicates (they are dropped from every other split).
    keep_several_answers: keep the problems whose statement accepts several outputs ("print
      any of them"); they are then judged against the one expected output, so a correct
      program that prints another valid answer scores as wrong. By default they are dropped
      (reason `several_valid_answers`).
    """

    source: Any = "sample"  # a path, hub id or "sample", or a list of paths
    format: str = "auto"
    date_from: str | None = None
    date_to: str | None = None
    default_time_limit_seconds: float = DEFAULT_OPTIONS.time_seconds
    default_memory_limit_bytes: int = DEFAULT_OPTIONS.memory_bytes
    difficulty_tiers: dict[str, str] = field(default_factory=_default_difficulty_tiers)
    out_dir: str = "data/processed"
    tier: str = "easy"
    tiers: dict[str, TierRange] = field(default_factory=_default_tiers)
    other_sources: str = "exclude"
    split_map: dict[str, str] = field(
        default_factory=lambda: {"train": "train", "valid": "test", "test": "test"}
    )
    heldout_split: str = "test"
    min_description_chars: int = 20
    max_time_limit_seconds: float = 60.0
    # The judge's time limit is the statement's times this, in validation and in the reward.
    time_limit_scale: float = 1.0
    # The language the prompts ask for (a judge language: cpp, python); the reward must
    # accept it.
    language: str = DEFAULT_LANGUAGE
    # Per language, the factor on that limit, in validation and in the reward (the judge's
    # `time_factors`; docs/languages.md has the measurement behind the defaults).
    time_factors: dict[str, float] = field(default_factory=default_time_factors)
    min_memory_limit_bytes: int = 1_000_000
    max_memory_limit_bytes: int = 4_294_967_296
    keep_several_answers: bool = False
    validate: bool = False
    validate_max_solutions: int = 3  # per language
    # The languages whose accepted solutions `validate` runs (CodeContests: cpp, python).
    validate_languages: list[str] = field(default_factory=lambda: [DEFAULT_LANGUAGE])
    validate_checker: str = "codecontests"
    validate_max_dropped_fraction: float = 0.5
    validate_workers: int = 0  # 0: the judge's default (usable CPUs)
    batch_size: int = 64
    force: bool = False  # rerun even when the output is up to date
    prompt: PromptConfig = field(default_factory=PromptConfig)
    checkers: CheckersConfig = field(default_factory=CheckersConfig)


@dataclass
class PrepareConfig:
    """Root of `conf/prepare.yaml`: only the `data` group."""

    data: DataConfig = field(default_factory=DataConfig)


def register_configs() -> None:
    """Register the schemas in Hydra's ConfigStore (idempotent)."""
    cs = ConfigStore.instance()
    cs.store(group="data", name="schema", node=DataConfig)
    cs.store(name="prepare_schema", node=PrepareConfig)


def builtin_config_dir() -> Path:
    """The config tree shipped in the package (same content as the repository's conf/)."""
    return Path(__file__).resolve().parent / "conf"


def data_config_from_dict(values: dict[str, Any]) -> DataConfig:
    """Build a validated `DataConfig` from a plain mapping (as Hydra composes it)."""
    from omegaconf import OmegaConf

    merged = OmegaConf.merge(OmegaConf.structured(DataConfig), values)
    obj = OmegaConf.to_object(merged)
    assert isinstance(obj, DataConfig)
    check_config(obj)
    return obj


def check_config(cfg: DataConfig) -> None:
    """Semantic checks Hydra's types cannot express; raises ValueError saying what to fix."""
    if not cfg.tiers:
        raise ValueError(
            "data.tiers is empty: define at least one tier (name: {min_rating, max_rating})."
        )
    for name, rng in cfg.tiers.items():
        if rng.min_rating > rng.max_rating:
            raise ValueError(
                f"data.tiers.{name}: min_rating {rng.min_rating} > max_rating {rng.max_rating}."
            )
    names = sorted(cfg.tiers)
    if cfg.tier not in cfg.tiers:
        raise ValueError(f"data.tier={cfg.tier!r} is not a defined tier; choose from {names}.")
    if cfg.other_sources != "exclude" and cfg.other_sources not in cfg.tiers:
        raise ValueError(
            f"data.other_sources={cfg.other_sources!r}: use 'exclude' or a tier name {names}."
        )
    if cfg.heldout_split not in cfg.split_map.values():
        raise ValueError(
            f"data.heldout_split={cfg.heldout_split!r} is not an output split of data.split_map "
            f"{dict(cfg.split_map)}."
        )
    check_source(cfg)
    if cfg.format != formats.AUTO and cfg.format not in formats.FORMATS:
        raise ValueError(
            f"data.format={cfg.format!r}: use {formats.AUTO} or one of "
            f"{', '.join(sorted(formats.FORMATS))}."
        )
    if not cfg.time_limit_scale > 0:
        raise ValueError(f"data.time_limit_scale must be > 0, got {cfg.time_limit_scale}.")
    check_languages(cfg)
    if cfg.batch_size < 1:
        raise ValueError("data.batch_size must be at least 1.")
    if not 0.0 <= cfg.prompt.persona_probability <= 1.0:
        raise ValueError("data.prompt.persona_probability must be within [0, 1].")
    if cfg.prompt.style not in PROMPT_STYLES:
        raise ValueError(
            f"data.prompt.style={cfg.prompt.style!r}: use one of {', '.join(PROMPT_STYLES)}."
        )
    if not cfg.prompt.instructions:
        raise ValueError("data.prompt.instructions is empty: give at least one instruction.")
    check_tiers(cfg.tiers)
    date_window(cfg)
    if not cfg.default_time_limit_seconds > 0 or cfg.default_memory_limit_bytes <= 0:
        raise ValueError(
            "data.default_time_limit_seconds and data.default_memory_limit_bytes must be > 0."
        )
    check_template(cfg.prompt.template)
    check_checkers(cfg.checkers)


def check_source(cfg: DataConfig) -> None:
    """Raise ValueError unless `data.source` is a non-empty text or list of texts."""
    sources = cfg.source if isinstance(cfg.source, list | tuple) else [cfg.source]
    if not sources or not all(isinstance(s, str) and s.strip() for s in sources):
        raise ValueError(
            f"data.source={cfg.source!r}: name a file, a directory, a hub id or sample, or a "
            "list of files and directories ([a.jsonl,b/])."
        )


def read_options(cfg: DataConfig) -> ReadOptions:
    """The limits the formats give a row that states none."""
    return ReadOptions(cfg.default_time_limit_seconds, cfg.default_memory_limit_bytes)


def parse_date(text: str) -> datetime.date:
    """An ISO date or date-time (`2024-08-01`, `2024-08-01T00:00:00`) → its date; ValueError."""
    return datetime.datetime.fromisoformat(text.strip()).date()


def date_window(cfg: DataConfig) -> tuple[datetime.date | None, datetime.date | None]:
    """(`data.date_from`, `data.date_to`) as dates; ValueError naming a bad one."""
    bounds = []
    for key in ("date_from", "date_to"):
        value = getattr(cfg, key)
        try:
            bounds.append(None if value in (None, "") else parse_date(str(value)))
        except ValueError:
            raise ValueError(
                f"data.{key}={value!r} is not a date: write YYYY-MM-DD (e.g. 2024-08-01)."
            ) from None
    low, high = bounds
    if low is not None and high is not None and low > high:
        raise ValueError(f"data.date_from={low} is after data.date_to={high}.")
    return low, high


def check_languages(cfg: DataConfig) -> None:
    """Raise ValueError naming the language setting (`data.language`, `data.time_factors`,
    `data.validate_languages`) to fix."""
    choices = ", ".join(LANGUAGES)
    if cfg.language not in LANGUAGES:
        raise ValueError(f"data.language={cfg.language!r}: use one of {choices}.")
    for language, factor in cfg.time_factors.items():
        if language not in LANGUAGES:
            raise ValueError(f"data.time_factors.{language}: unknown language; use {choices}.")
        if not factor > 0:
            raise ValueError(f"data.time_factors.{language} must be > 0, got {factor}.")
    if not cfg.validate_languages:
        raise ValueError(f"data.validate_languages is empty: list one or more of {choices}.")
    for language in cfg.validate_languages:
        if language not in LANGUAGES:
            raise ValueError(
                f"data.validate_languages: unknown language {language!r}; use {choices}."
            )


def check_checkers(cfg: CheckersConfig) -> None:
    """Raise ValueError naming the `data.checkers` setting to fix."""
    if cfg.language != AUTO and cfg.language not in LANGUAGES:
        choices = ", ".join([AUTO, *LANGUAGES])
        raise ValueError(f"data.checkers.language={cfg.language!r}: use one of {choices}.")
    if cfg.folder and not Path(cfg.folder).expanduser().is_dir():
        raise ValueError(f"data.checkers.folder={cfg.folder!r} is not a directory.")
    if cfg.testlib and not Path(cfg.testlib).expanduser().is_file():
        raise ValueError(
            f"data.checkers.testlib={cfg.testlib!r} is not a file: give the path of your "
            "copy of testlib.h (https://github.com/MikeMirzayanov/testlib)."
        )
    for key in ("min_tpr", "min_tnr"):
        if not 0.0 <= getattr(cfg, key) <= 1.0:
            raise ValueError(f"data.checkers.{key} must be within [0, 1].")
    if cfg.min_accepted < 0 or cfg.min_incorrect < 0 or cfg.max_programs < 1:
        raise ValueError(
            "data.checkers: min_accepted and min_incorrect must be >= 0, max_programs >= 1."
        )
    if not cfg.time_seconds > 0 or cfg.memory_bytes <= 0:
        raise ValueError("data.checkers: time_seconds and memory_bytes must be > 0.")


def check_tiers(tiers: dict[str, TierRange]) -> None:
    """Raise ValueError when two tiers overlap (a problem must have exactly one tier)."""
    ordered = sorted(tiers.items(), key=lambda kv: (kv[1].min_rating, kv[1].max_rating))
    for (a, ra), (b, rb) in itertools.pairwise(ordered):
        if rb.min_rating <= ra.max_rating:
            raise ValueError(
                f"data.tiers.{a} [{ra.min_rating}, {ra.max_rating}] overlaps data.tiers.{b} "
                f"[{rb.min_rating}, {rb.max_rating}]; make the ranges disjoint."
            )


TEMPLATE_FIELDS = frozenset({"instruction", "description", "time_limit", "memory_limit", "name"})


def check_template(template: str) -> None:
    """Raise ValueError when `template` uses a field we do not provide or is not a format string."""
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise ValueError(f"data.prompt.template is not a valid format string: {exc}") from exc
    for f in fields:
        base = f.split(".")[0].split("[")[0]
        if base not in TEMPLATE_FIELDS:
            raise ValueError(
                f"data.prompt.template uses unknown field {{{f}}}; available: "
                f"{', '.join('{' + x + '}' for x in sorted(TEMPLATE_FIELDS))}."
            )
    if "{description}" not in template:
        raise ValueError("data.prompt.template must contain {description}.")
