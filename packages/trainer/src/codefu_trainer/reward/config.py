"""Reward configuration: the schema of the Hydra group ``reward`` (``conf/reward/*.yaml``).

Defaults follow CodeFu (docs/ARCHITECTURE.md, "Reward"): no extractable code −1, compile
error −0.5, any test over the time limit 0, otherwise the fraction of private tests passed.
Other modes: all-or-nothing, pass ratio to a power, and public tests judged before the
private ones. ``extraction`` is how a response becomes code (this project's rules, or
LiveCodeBench's). ``languages`` lists the judge languages a run accepts (CodeFu: C++ only);
an answer in another one gets the no-code reward with the verdict ``LANGUAGE``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from omegaconf import OmegaConf

from codefu_sandbox import JudgingPolicy
from codefu_sandbox.languages import DEFAULT_LANGUAGE, LANGUAGES, default_time_factors

if TYPE_CHECKING:
    from codefu_data.config import DataConfig

__all__ = [
    "FROM_DATA",
    "JUDGE_RESOURCE",
    "SCHEMA_NAME",
    "DeadlineConfig",
    "Extraction",
    "FailureAlertConfig",
    "RewardConfig",
    "RewardMode",
    "WorkerConfig",
    "register_reward_schema",
    "reward_config_from",
    "use_data_settings",
    "use_time_limit_scale",
]

SCHEMA_NAME = "reward_schema"
# The Ray resource of judge hosts: the name the launcher gives its CPU-only hosts
# (codefu_launcher.plan.JUDGE_RESOURCE, held equal by a test). A judge node installs the
# reward without the launcher, so the reward states the name it asks for.
JUDGE_RESOURCE = "judge"
# Reward settings whose one place is the data group in codefu-train and codefu-eval (data
# validation judges under them too): `use_data_settings` copies them over.
FROM_DATA = ("time_limit_scale", "time_factors")


class Extraction(StrEnum):
    """How a response becomes the code judged (`reward.extract`)."""

    # Member names equal their values: OmegaConf reads enum values by member name.
    codefu = "codefu"  # this project's rules: <think>, <code>, tagged fences (training's)
    livecodebench = "livecodebench"  # LiveCodeBench's: the lines between the last two fences
    none = "none"  # the response is the code as it is (generations already extracted)


class RewardMode(StrEnum):
    """How the tests passed become a reward for a program that compiled and did not time out."""

    # Member names equal their values: OmegaConf reads enum values by member name.
    linear = "linear"  # passed / total
    all_or_nothing = "all_or_nothing"  # 1 when every test passes, else 0
    power = "power"  # (passed / total) ** power_exponent


@dataclass
class DeadlineConfig:
    """Per-response deadline.

    compile_seconds + Σ_tests (time limit × wall_factor + per_test_overhead) + slack,
    capped at max_seconds, where the time limit is the one the judge applies to the
    answer's language (the problem's times the language's time factor). The defaults
    3 × limit + 0.5 s are the judge's wall-clock backstop per test
    (``codefu_sandbox.judge.wall_backstop``).

    Past it the response gets the verdict ``DEADLINE``, ``judge_failure_score`` and
    ``judge_failure=1``. The judge bounds every program itself, so the deadline only fires
    when a worker hangs or its node stalls.
    """

    compile_seconds: float = 60.0
    wall_factor: float = 3.0
    per_test_overhead_seconds: float = 0.5
    slack_seconds: float = 15.0
    max_seconds: float = 900.0


@dataclass
class WorkerConfig:
    """Ray judge workers: where they run and how many."""

    # Custom Ray resource marking judge nodes (the launcher's name for CPU-only hosts); when
    # no alive node has it, any CPU node judges.
    resource: str = JUDGE_RESOURCE
    # None: one worker per CPU of the judge nodes (or per available CPU without judge nodes).
    num_workers: int | None = None
    cpus_per_worker: float = 1.0
    # Compile cache / precompiled-header directory on each node; None: the Judge default
    # ($CODEFU_CACHE_DIR or ~/.cache/codefu), which is per node.
    cache_dir: str | None = None
    # A worker that does not start within this many seconds is given up (never waited on).
    start_timeout_seconds: float = 120.0
    # A response that finds no free worker for this long fails as a judge failure.
    acquire_timeout_seconds: float = 900.0
    # How many times the work of a dead worker (or node), or a judge internal error (IE),
    # is retried.
    max_retries: int = 1
    # Ray namespace-wide name of the shared dispatcher (several reward-loop processes share it).
    pool_name: str = "codefu-judge-pool"
    # Verdict audit: this share of the judged submissions is judged a second time on another
    # worker (another node when the pool spans several) and the verdicts compared; a flip is
    # a loud warning. 0 turns the audit off. The audit's verdict never changes the reward.
    audit_share: float = 0.01
    # Seed of the audit's choice of submissions (reproducible choices for one seed).
    audit_seed: int = 0


@dataclass
class FailureAlertConfig:
    """What a step with too many judge failures does (never silently train on them)."""

    # A step whose share of judge failures (deadline, worker lost, judge error, IE) is above
    # this: a console warning and the MLflow tag `codefu.judge_failure_alert`.
    max_rate: float = 0.05
    # And stop training (an error naming the step) instead of going on.
    stop: bool = False


@dataclass
class RewardConfig:
    """Reward rules, judging options, deadline and worker settings (Hydra group ``reward``)."""

    mode: RewardMode = RewardMode.linear
    power_exponent: float = 1.5
    # Judge the problem's public (example) tests too, before its private ones: a choice for
    # training (the examples are in the prompt); LiveCodeBench's protocol judges them.
    include_public_tests: bool = False
    # How a response becomes the code judged (reward.extract): this project's rules, or
    # LiveCodeBench's (eval.protocol=livecodebench), or none (the response is the code).
    extraction: Extraction = Extraction.codefu
    no_code_score: float = -1.0
    compile_error_score: float = -0.5
    timeout_score: float = 0.0  # any test over the time limit
    judge_failure_score: float = 0.0  # deadline passed, worker lost twice, judge internal error
    # Any TLE decides the reward (timeout_score), so stop judging at the first one; the
    # result's `passed` then counts the tests run before it. Off: every test runs.
    stop_on_timeout: bool = True
    # Output comparison: a codefu_sandbox checker name; codecontests = token-wise compare,
    # real numbers within float_tolerance.
    checker: str = "codecontests"
    # Absolute-or-relative tolerance for real-number answers (checkers codecontests, floats).
    float_tolerance: float = 1e-6
    # Problem limits: scale the time limit; defaults where the dataset has none. The scale is
    # data.time_limit_scale, which data validation judges under too: codefu-train and
    # codefu-eval set it from there (`use_time_limit_scale`); set it here only for
    # `codefu-reward score`.
    time_limit_scale: float = 1.0
    # The languages answers may come in (judge languages: cpp, python, ...), the first the
    # main one: a `<code>` block or an untagged fence is taken in it (reward.extract).
    languages: list[str] = field(default_factory=lambda: [DEFAULT_LANGUAGE])
    # Per language, the factor on the (scaled) time limit, applied once in the judge's
    # requests (`policy()`; default: each language's). The factors are data.time_factors,
    # which data validation judges under too: codefu-train and codefu-eval set them from
    # there (`use_data_settings`); set them here only for `codefu-reward score`.
    time_factors: dict[str, float] = field(default_factory=default_time_factors)
    default_time_limit_seconds: float = 2.0
    default_memory_limit_bytes: int = 256 * 1024 * 1024
    deadline: DeadlineConfig = field(default_factory=DeadlineConfig)
    worker: WorkerConfig = field(default_factory=WorkerConfig)
    failure_alert: FailureAlertConfig = field(default_factory=FailureAlertConfig)

    def __post_init__(self) -> None:
        self.mode = RewardMode(self.mode)
        self.extraction = Extraction(self.extraction)
        if self.power_exponent <= 0:
            raise ValueError(f"reward.power_exponent must be > 0, got {self.power_exponent}")
        if self.time_limit_scale <= 0:
            raise ValueError(f"reward.time_limit_scale must be > 0, got {self.time_limit_scale}")
        self.languages = list(self.languages)
        self.time_factors = dict(self.time_factors)
        _check_languages(self.languages, self.time_factors)
        if self.worker.max_retries < 0:
            raise ValueError("reward.worker.max_retries must be >= 0")
        if not 0.0 <= self.worker.audit_share <= 1.0:
            raise ValueError(
                f"reward.worker.audit_share must be within [0, 1], got {self.worker.audit_share}"
            )
        if not 0.0 <= self.failure_alert.max_rate <= 1.0:
            raise ValueError(
                "reward.failure_alert.max_rate must be within [0, 1], got "
                f"{self.failure_alert.max_rate}"
            )

    def policy(self) -> JudgingPolicy:
        """How this reward judges (the sandbox's `JudgingPolicy`): its comparison and float
        tolerance, time-limit scale and time factors, the languages it accepts, the default
        limits, public tests, and where judging stops (an all-or-nothing reward at the
        first failing test, `stop_on_timeout` at the first TLE)."""
        return JudgingPolicy(
            checker=self.checker,
            tolerance=self.float_tolerance,
            time_limit_scale=self.time_limit_scale,
            time_factors=self.time_factors,
            languages=tuple(self.languages),
            default_time_seconds=self.default_time_limit_seconds,
            default_memory_bytes=self.default_memory_limit_bytes,
            include_public_tests=self.include_public_tests,
            stop_on_first_failure=self.mode is RewardMode.all_or_nothing,
            stop_on_timeout=self.stop_on_timeout,
        )


def _check_languages(languages: list[str], time_factors: dict[str, float]) -> None:
    """ValueError naming the ``reward.languages``/``reward.time_factors`` setting to fix."""
    if not languages:
        raise ValueError(f"reward.languages is empty: list one or more of {', '.join(LANGUAGES)}")
    for where, names in (("languages", languages), ("time_factors", list(time_factors))):
        unknown = [name for name in names if name not in LANGUAGES]
        if unknown:
            raise ValueError(
                f"reward.{where}: unknown language {unknown[0]!r}: the judge takes "
                f"{', '.join(LANGUAGES)}"
            )
    if len(set(languages)) != len(languages):
        raise ValueError(f"reward.languages lists a language twice: {languages}")
    for language, factor in time_factors.items():
        if not factor > 0:
            raise ValueError(f"reward.time_factors.{language} must be > 0, got {factor}")


def register_reward_schema() -> None:
    """Register ``RewardConfig`` as ``reward/reward_schema`` in Hydra's ConfigStore.

    ``conf/reward/*.yaml`` start with ``defaults: [reward_schema, _self_]``, so a misspelled
    key or a wrong type in them or in a ``reward.*`` override is an error naming the key.
    """
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(group="reward", name=SCHEMA_NAME, node=RewardConfig)


def use_time_limit_scale(config: RewardConfig, scale: float) -> None:
    """Judge under `scale`, ``data.time_limit_scale``: the one time-limit scale, which data
    validation judges the accepted solutions under too. ValueError when
    ``reward.time_limit_scale`` was set to another value (set ``data.time_limit_scale``)."""
    if config.time_limit_scale not in (1.0, scale):
        raise ValueError(
            f"reward.time_limit_scale={config.time_limit_scale} but "
            f"data.time_limit_scale={scale}: set data.time_limit_scale, the one scale "
            "(data validation judges under it too)"
        )
    config.time_limit_scale = scale


def use_data_settings(config: RewardConfig, data: DataConfig) -> None:
    """Judge under the data settings that data validation judges under too:
    ``data.time_limit_scale`` (``use_time_limit_scale``) and ``data.time_factors``.
    ValueError when ``reward.time_factors`` was set to other factors (set
    ``data.time_factors``), or when ``reward.languages`` lacks ``data.language``, the
    language the prompts ask for."""
    use_time_limit_scale(config, data.time_limit_scale)
    if data.language not in config.languages:
        raise ValueError(
            f"data.language={data.language} but reward.languages={config.languages}: the "
            f"prompts ask for answers the reward refuses; add it "
            f"(reward.languages=[{','.join([*config.languages, data.language])}])"
        )
    factors = dict(data.time_factors)
    if config.time_factors not in (default_time_factors(), factors):
        raise ValueError(
            f"reward.time_factors={config.time_factors} but data.time_factors={factors}: set "
            "data.time_factors, the one setting (data validation judges under it too)"
        )
    _check_languages(config.languages, factors)
    config.time_factors = factors


def reward_config_from(cfg: Any) -> RewardConfig:
    """A ``RewardConfig`` from a composed ``reward`` node, a dict, or a ``RewardConfig``."""
    if isinstance(cfg, RewardConfig):
        return cfg
    if cfg is None:
        return RewardConfig()
    merged = OmegaConf.merge(OmegaConf.structured(RewardConfig), cfg)
    obj = OmegaConf.to_object(merged)
    assert isinstance(obj, RewardConfig)
    obj.__post_init__()
    return obj


register_reward_schema()
