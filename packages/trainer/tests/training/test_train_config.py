"""Both configuration stages: every cluster option composes and passes veRL's validation."""

from __future__ import annotations

from dataclasses import MISSING as NO_DEFAULT
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codefu_launcher.spec import InstanceGroupSpec, JobSettings
from codefu_trainer.run.config import checkpoint_dir, final_model_dir
from codefu_trainer.run.overrides import ConfigError, hydra_value, split_overrides
from codefu_trainer.training.clusters.registry import compose_run
from codefu_trainer.training.sagemaker.settings import (
    GroupRole,
    InstanceGroupConfig,
    SageMakerConfig,
)
from codefu_trainer.training.verl.config import validate_verl_config

from ..conftest import CONF

CLUSTERS = sorted(p.stem for p in (CONF / "cluster").glob("*.yaml"))


def test_the_required_cluster_options_exist() -> None:
    assert {"local", "cpu", "sagemaker_p4de", "sagemaker_p5", "sagemaker_hetero"} <= set(CLUSTERS)


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_every_cluster_composes_and_passes_verl_validation(cluster: str, tmp_path: Path) -> None:
    overrides = [f"cluster={cluster}", f"run.dir={tmp_path}"]
    run = compose_run(CONF, overrides, gpus_detected=8)  # cpu_verl with its kind's settings
    assert run.verl is not None
    # veRL's own checks (validate_config, rollout/algorithm dataclasses, reward import),
    # also for cpu where codefu-train skips them (the rehearsal has no GPUs to plan).
    validate_verl_config(run.verl)
    v = run.verl
    assert v.trainer.nnodes == run.cfg.cluster.nnodes
    assert v.trainer.n_gpus_per_node == (run.cfg.cluster.gpus_per_node or 8)
    if cluster == "cpu_verl":  # the warm-started model and the chosen problems, in the run dir
        assert v.actor_rollout_ref.model.path == str(tmp_path / "base_model")
        assert v.data.train_files == [str(tmp_path / "data" / "easy" / "train.parquet")]
    else:
        assert v.actor_rollout_ref.model.path == run.cfg.model.path
        train = Path("data/processed").resolve() / "easy" / "train.parquet"
        assert v.data.train_files == [str(train)]
    assert v.trainer.default_local_dir == str(tmp_path / "checkpoints")


def test_cpu_verl_is_composed_only_with_the_cpu_settings(tmp_path: Path) -> None:
    """veRL on CPU needs its own settings (hf rollout, CPU platform): its kind composes them
    in, and another kind's settings cannot compose it; its settings compose no other cluster."""
    from codefu_trainer.run.cluster_kinds import CLUSTER_KINDS
    from codefu_trainer.training.clusters.base import Cluster
    from codefu_trainer.training.clusters.registry import train_config
    from codefu_trainer.training.verl.cpu.patches import ROLLOUT_NAME

    local, cpu_kind = CLUSTER_KINDS["local"], CLUSTER_KINDS["cpu_verl"]
    assert isinstance(local, Cluster) and isinstance(cpu_kind, Cluster)

    run = compose_run(CONF, ["cluster=cpu_verl", f"run.dir={tmp_path}"])
    assert run.verl is not None and run.verl.actor_rollout_ref.rollout.name == ROLLOUT_NAME
    cpu_verl = train_config(CONF, split_overrides(["cluster=cpu_verl"])[0])
    with pytest.raises(ConfigError, match="cannot compose cluster=cpu_verl"):
        local.compose(cpu_verl, CONF, [f"run.dir={tmp_path}"])
    on_gpus = train_config(CONF, split_overrides(["cluster=local"])[0])
    with pytest.raises(ConfigError, match="cannot compose cluster=local"):
        cpu_kind.compose(on_gpus, CONF, [], gpus_detected=8)


def test_codefu_grpo_defaults(tmp_path: Path) -> None:
    v = compose_run(CONF, [f"run.dir={tmp_path}"], gpus_detected=8).verl
    assert v is not None
    actor, rollout = v.actor_rollout_ref.actor, v.actor_rollout_ref.rollout
    assert v.algorithm.adv_estimator == "grpo"
    assert rollout.n == 8 and rollout.tensor_model_parallel_size == 2 and rollout.name == "vllm"
    assert v.data.train_batch_size == 64
    assert (v.data.max_prompt_length, v.data.max_response_length) == (4096, 20480)
    assert actor.ulysses_sequence_parallel_size == 1  # 4 needs flash attention
    assert v.actor_rollout_ref.model.override_config.attn_implementation == "sdpa"
    assert actor.optim.lr == pytest.approx(1e-5)
    assert actor.use_kl_loss and actor.kl_loss_type == "low_var_kl"
    assert actor.kl_loss_coef == pytest.approx(0.001) and actor.entropy_coeff == pytest.approx(
        0.001
    )
    assert v.data.train_batch_size >= 4 * actor.ppo_mini_batch_size
    assert v.trainer.test_freq == 16 and v.trainer.resume_mode == "auto"
    assert list(v.trainer.logger) == ["console", "mlflow"]
    assert v.reward.custom_reward_function.path == "pkg://codefu_trainer.reward.verl_adapter"


def test_cpu_cluster_defaults_to_the_tiny_model_unless_a_model_is_chosen(tmp_path: Path) -> None:
    assert compose_run(CONF, ["cluster=cpu"], with_verl=False).cfg.model.name == "tiny"
    assert compose_run(CONF, ["cluster=local"], with_verl=False).cfg.model.name != "tiny"
    with pytest.raises(ConfigError, match="model=tiny"):
        compose_run(CONF, ["cluster=cpu", "model=deepseek_r1_distill_qwen_7b"], with_verl=False)


def test_hetero_cluster_has_train_and_judge_groups_and_sets_the_judge_resource() -> None:
    run = compose_run(CONF, ["cluster=sagemaker_hetero"], with_verl=False)
    roles = {g.role for g in run.cfg.cluster.sagemaker.instance_groups}
    assert roles == {GroupRole.train, GroupRole.judge}
    assert run.cfg.reward.worker.resource == "judge"
    assert run.cfg.cluster.kind == "sagemaker"


def test_the_reward_judges_under_the_data_time_limit_scale() -> None:
    assert compose_run(CONF, [], with_verl=False).cfg.reward.time_limit_scale == 1.0
    run = compose_run(CONF, ["data.time_limit_scale=2.5"], with_verl=False)
    assert (run.cfg.data.time_limit_scale, run.cfg.reward.time_limit_scale) == (2.5, 2.5)
    with pytest.raises(ConfigError, match=r"set data\.time_limit_scale"):
        compose_run(CONF, ["reward.time_limit_scale=3"], with_verl=False)
    with pytest.raises(ConfigError, match=r"time_limit_scale must be > 0"):
        compose_run(CONF, ["data.time_limit_scale=0"], with_verl=False)


def test_a_python_run_gives_the_reward_its_language_and_time_factors() -> None:
    cpp = compose_run(CONF, [], with_verl=False).cfg
    assert (cpp.data.language, cpp.reward.languages) == ("cpp", ["cpp"])
    assert cpp.reward.time_factors == {"cpp": 1.0, "python": 1.0}
    run = compose_run(
        CONF,
        ["data.language=python", "reward.languages=[python]", "data.time_factors.python=2"],
        with_verl=False,
    )
    assert run.cfg.reward.time_factors == {"cpp": 1.0, "python": 2.0}
    with pytest.raises(ConfigError, match=r"add it \(reward\.languages=\[cpp,python\]\)"):
        compose_run(CONF, ["data.language=python"], with_verl=False)
    with pytest.raises(ConfigError, match=r"set data\.time_factors"):
        compose_run(CONF, ["reward.time_factors.python=3"], with_verl=False)


def test_the_judge_resource_is_the_launchers(tmp_path: Path) -> None:
    """One name for judge hosts: the launcher's; the reward's default and a cluster with
    judge hosts use it, even where reward.worker.resource named another."""
    from codefu_launcher.plan import JUDGE_RESOURCE
    from codefu_trainer.reward.config import RewardConfig

    assert RewardConfig().worker.resource == JUDGE_RESOURCE
    hetero = ["cluster=sagemaker_hetero", "reward.worker.resource=elsewhere"]
    assert compose_run(CONF, hetero, with_verl=False).cfg.reward.worker.resource == JUDGE_RESOURCE
    local = ["cluster=local", "reward.worker.resource=elsewhere"]
    assert compose_run(CONF, local, with_verl=False).cfg.reward.worker.resource == "elsewhere"
    with pytest.raises(ConfigError, match="judge_resource"):
        compose_run(CONF, ["cluster=local", "cluster.judge_resource=judge"], with_verl=False)


def test_instance_types_of_the_reference_clusters() -> None:
    p4de = compose_run(CONF, ["cluster=sagemaker_p4de"], with_verl=False).cfg.cluster
    p5 = compose_run(CONF, ["cluster=sagemaker_p5"], with_verl=False).cfg.cluster
    assert p4de.sagemaker.instance_type == "ml.p4de.24xlarge"
    assert p5.sagemaker.instance_type == "ml.p5.48xlarge"
    two = compose_run(
        CONF, ["cluster=sagemaker_p5", "cluster.sagemaker.instance_count=2"], gpus_detected=8
    )
    assert two.cfg.cluster.nnodes == 2 and two.verl is not None and two.verl.trainer.nnodes == 2


def defaults(cls: type) -> dict[str, Any]:
    """Each field of the dataclass `cls` and its default (NO_DEFAULT for none)."""
    return {
        f.name: f.default if f.default_factory is NO_DEFAULT else f.default_factory()
        for f in fields(cls)
    }


def test_cluster_sagemaker_has_the_launchers_job_settings_and_their_defaults() -> None:
    """cluster.sagemaker is the launcher's JobSettings: the same keys and defaults, save the
    two it sets on purpose, plus the instance groups (with their roles)."""
    ours, launcher = defaults(SageMakerConfig), defaults(JobSettings)
    assert set(ours) - set(launcher) == {"instance_groups"}
    assert {k for k in launcher if ours[k] != launcher[k]} == {"base_job_name", "dry_run"}
    assert (ours["base_job_name"], launcher["base_job_name"]) == ("codefu-grpo", NO_DEFAULT)
    assert (ours["dry_run"], launcher["dry_run"]) == (True, False)  # submitting costs money
    assert defaults(InstanceGroupConfig) == {**defaults(InstanceGroupSpec), "role": GroupRole.train}
    # The keys users set stay as they were before cluster.sagemaker came from the launcher.
    assert set(ours) == set(SAGEMAKER_KEYS.split())


SAGEMAKER_KEYS = """base_job_name instance_type instance_count instance_groups head_instance_group
image_uri role_arn region max_runtime_seconds keep_alive_seconds volume_size_gb
checkpoint_s3_uri output_s3_uri max_retry_attempts environment secret_parameters
launcher_args staging_s3_uri remote_debug dry_run"""


def test_every_sagemaker_setting_reaches_the_job_spec() -> None:
    """build_job_spec carries every JobSettings field of cluster.sagemaker (each set away
    from the launcher's default here, but the homogeneous-only pair) into the JobSpec."""
    from codefu_trainer.training.sagemaker.job import build_job_spec

    chosen = [
        "image_uri=img:1", "role_arn=arn:aws:iam::1:role/r", "region=eu-west-1",
        "checkpoint_s3_uri=s3://b/ck", "output_s3_uri=s3://b/out", "max_retry_attempts=0",
        "max_runtime_seconds=60", "keep_alive_seconds=30", "launcher_args=[--temp-dir,/tmp/r]",
        "staging_s3_uri=s3://b/stage", "remote_debug=true",
    ]  # fmt: skip
    overrides = [
        "cluster=sagemaker_hetero",
        *(f"cluster.sagemaker.{c}" for c in chosen),
        "+cluster.sagemaker.environment.MY_SETTING=1",
        "+cluster.sagemaker.secret_parameters.MY_KEY=/codefu/k",
    ]
    run = compose_run(CONF, overrides, with_verl=False)
    sm = run.cfg.cluster.sagemaker
    launcher = defaults(JobSettings)
    assert {k for k in launcher if getattr(sm, k) == launcher[k]} == {
        "instance_type",
        "instance_count",
    }
    spec = build_job_spec(run.cfg, run.conf_dir, run.overrides)
    assert {k: getattr(spec, k) for k in launcher} == {k: getattr(sm, k) for k in launcher}
    assert spec.environment is not sm.environment  # the spec's own copy
    assert spec.run_name == run.cfg.run.name
    assert spec.instance_groups == [
        InstanceGroupSpec("train", "ml.p4de.24xlarge", 1),
        InstanceGroupSpec("judge", "ml.c7i.24xlarge", 2),
    ]
    assert {type(g) for g in spec.instance_groups} == {InstanceGroupSpec}  # no roles: JSON


def test_overrides_reach_the_right_stage(tmp_path: Path) -> None:
    run = compose_run(
        CONF,
        [
            "cluster=sagemaker_p4de",
            "trainer.total_epochs=3",
            "verl.data.train_batch_size=128",
            "data=hard",
            "reward.no_code_score=-2",
            f"run.dir={tmp_path}",
        ],
        gpus_detected=8,
    )
    assert run.verl is not None
    assert run.verl.trainer.total_epochs == 3 and run.verl.data.train_batch_size == 128
    assert run.cfg.data.tier == "hard" and run.cfg.reward.no_code_score == -2
    assert run.verl.data.train_files[0].endswith("hard/train.parquet")
    env = run.verl.ray_kwargs.ray_init.runtime_env.env_vars
    reward = run.verl.reward.custom_reward_function.reward_kwargs.reward_config
    assert reward.no_code_score == -2.0  # the one route to veRL's reward workers
    assert "CODEFU_REWARD_CONFIG" not in env
    expected_uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert expected_uri == env.MLFLOW_TRACKING_URI


@pytest.mark.parametrize(
    ("overrides", "needles"),
    [
        (["cluster=nonexistent"], ["'nonexistent'", "cluster", "local", "sagemaker_p4de", "cpu"]),
        (
            ["cluster.bogus=1"],
            ["cluster.bogus=1", "'bogus'", "nnodes", "gpus_per_node", "sagemaker"],
        ),
        (
            ["cluster.sagemaker.instance_typ=x"],
            ["'instance_typ'", "did you mean 'cluster.sagemaker.instance_type'?"],
        ),
        (["cluster.nnodes=two"], ["cluster.nnodes"]),
        (["model=tinyy"], ["'tinyy'", "did you mean 'tiny'"]),
        (["trainer.bogus_key=1"], ["'bogus_key'", "trainer", "total_epochs"]),
        (["nonsense.key=1"], ["'nonsense'", "actor_rollout_ref", "algorithm"]),
        (["verl.data.bogus=1"], ["'bogus'", "train_batch_size"]),
        (["actor_rollout_ref.actor.loss_agg_mode=bogus"], ["veRL rejected", "bogus"]),
        (["actor_rollout_ref.actor.use_dynamic_bsz=false"], ["veRL rejected", "micro_batch"]),
        (["data.tier=medium"], ["medium", "easy", "hard", "expert"]),
        # Misspelled keys: the closest full dotted names over both stages' keys.
        (["trainer.totl_steps=3"], ["'totl_steps'", "'trainer.total_training_steps'"]),
        (["trainer.save_frq=1"], ["did you mean 'trainer.save_freq'?"]),
        (["algorithm.adv_estimatr=grpo"], ["did you mean 'algorithm.adv_estimator'?"]),
        (
            ["actor_rollout_ref.rollout.tempreture=1"],
            ["did you mean 'actor_rollout_ref.rollout.temperature'?"],
        ),
        (["rehersal.steps=2"], ["did you mean 'rehearsal.steps'?"]),  # ours, routed to veRL
        (["data.max_prompt_lenght=9"], ["did you mean 'verl.data.max_prompt_length'?"]),
        (["verl.data.max_prompt_lenght=9"], ["did you mean 'verl.data.max_prompt_length'?"]),
        (["model.tiny.hiden_size=8"], ["did you mean 'model.tiny.hidden_size'?"]),
        (["reward.worker.num_worker=2"], ["did you mean 'reward.worker.num_workers'?"]),
        (["cluster.gpus_per_node=3"], ["3 GPUs", "tensor_model_parallel_size"]),
        (["run.evaluate_final=true"], ["run.evaluate_final=true", "(cluster=cpu)"]),
    ],
)
def test_bad_overrides_name_the_problem_and_the_valid_choices(
    overrides: list[str], needles: list[str], tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as err:
        compose_run(
            CONF, ["cluster=sagemaker_p4de", f"run.dir={tmp_path}", *overrides], gpus_detected=8
        )
    for needle in needles:
        assert needle in str(err.value)


def test_split_overrides() -> None:
    ours, theirs = split_overrides(
        [
            "cluster=cpu",
            "+run.extra=1",
            "trainer.total_epochs=1",
            "verl.data.seed=3",
            "~algorithm.kl_ctrl",
        ]
    )
    assert [o.text for o in ours] == ["cluster=cpu", "+run.extra=1"]
    assert [o.text for o in theirs] == [
        "trainer.total_epochs=1",
        "data.seed=3",
        "~algorithm.kl_ctrl",
    ]
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        split_overrides(["cluster"])


_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**9), 10**9)
    | st.text(max_size=20).filter(lambda s: "${" not in s),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(_values)
def test_hydra_value_round_trips_through_hydras_parser(value: object) -> None:
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_override(f"key={hydra_value(value)}")
    assert parsed.value() == value


def test_checkpoint_and_model_dirs_follow_sagemaker(tmp_path: Path) -> None:
    assert checkpoint_dir(tmp_path, env={}) == tmp_path / "checkpoints"
    assert final_model_dir(tmp_path, env={}) == tmp_path / "model"
    sm = {"TRAINING_JOB_NAME": "j", "SM_MODEL_DIR": "/opt/ml/model"}
    assert checkpoint_dir(tmp_path, env=sm) == Path("/opt/ml/checkpoints")
    assert final_model_dir(tmp_path, env=sm) == Path("/opt/ml/model")


def test_the_sagemaker_head_names_its_mlflow_run_after_run_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inside the job the head composes `job_overrides`: MLflow's run name is run.name."""
    from codefu_trainer.training.sagemaker.job import job_overrides

    user = ["cluster=sagemaker_p4de", "run.name=exp-a", "trainer.total_epochs=2"]
    cfg = compose_run(CONF, user, with_verl=False).cfg
    monkeypatch.setenv("TRAINING_JOB_NAME", "codefu-grpo-p4de-2026-11-23-00-00-00-000")
    head = compose_run(CONF, job_overrides(cfg, user), gpus_detected=8)
    assert head.verl is not None
    trainer = head.verl.trainer
    assert trainer.experiment_name == "exp-a"  # veRL's MLflow run name
    assert trainer.default_local_dir == "/opt/ml/checkpoints"  # restored from S3 by SageMaker
    assert trainer.resume_mode == "auto"
    assert trainer.total_epochs == 2


def test_the_rehearsal_clips_as_verl_is_configured(tmp_path: Path) -> None:
    """TRL's epsilon/epsilon_high come from veRL's clip_ratio_low/high (clip_ratio is unused)."""
    from codefu_trainer.training.rehearsal.loop import _algorithm_settings

    v = compose_run(
        CONF,
        [
            f"run.dir={tmp_path}",
            "verl.actor_rollout_ref.actor.clip_ratio_low=0.15",
            "verl.actor_rollout_ref.actor.clip_ratio_high=0.3",
        ],
        gpus_detected=8,
    ).verl
    assert v is not None
    algo = _algorithm_settings(v)
    assert (algo["epsilon"], algo["epsilon_high"]) == (0.15, 0.3)
