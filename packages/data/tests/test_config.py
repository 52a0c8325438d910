"""Hydra composition: repository conf/, built-in copy, overrides and their errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codefu_data.cli import load_data_config
from codefu_data.config import DataConfig, builtin_config_dir
from codefu_data.reader import DataError

REPO_CONF = Path(__file__).resolve().parents[3] / "conf"
needs_repo = pytest.mark.skipif(
    not (REPO_CONF / "prepare.yaml").is_file(), reason="repository conf/ not present"
)


@needs_repo
def test_builtin_defaults_are_the_repository_conf() -> None:
    for rel in ["prepare.yaml", *(f"data/{p.name}" for p in (REPO_CONF / "data").glob("*.yaml"))]:
        assert (builtin_config_dir() / rel).read_text() == (REPO_CONF / rel).read_text(), rel
    assert sorted(p.name for p in (builtin_config_dir() / "data").glob("*.yaml")) == sorted(
        p.name for p in (REPO_CONF / "data").glob("*.yaml")
    )


@pytest.mark.parametrize("config_dir", [None, str(REPO_CONF)])
def test_defaults_match_the_schema(config_dir: str | None) -> None:
    if config_dir and not Path(config_dir).is_dir():
        pytest.skip("repository conf/ not present")
    cfg = load_data_config(config_dir, [])
    assert cfg == DataConfig()
    assert cfg.source == "sample" and cfg.out_dir == "data/processed" and cfg.tier == "easy"
    assert {k: (r.min_rating, r.max_rating) for k, r in cfg.tiers.items()} == {
        "easy": (800, 1000),
        "hard": (1100, 2200),
        "expert": (2300, 3500),
    }


def test_tier_options_and_overrides() -> None:
    assert load_data_config(None, ["data=hard"]).tier == "hard"
    assert load_data_config(None, ["data=expert"]).tier == "expert"
    cfg = load_data_config(
        None,
        ["data.tiers.hard.max_rating=2400", "data.tiers.expert.min_rating=2500", "validate=true"],
    )
    assert cfg.tiers["hard"].max_rating == 2400 and cfg.validate is True
    assert load_data_config(None, ["source=/x"]).source == "/x"
    assert (
        load_data_config(None, ["data.prompt.persona_probability=0"]).prompt.persona_probability
        == 0.0
    )


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("data.sourc=/x", "sourc"),
        ("data.batch_size=many", "batch_size"),
        ("data=medium", "medium"),
        ("dat.source=/x", "dat"),
    ],
)
def test_bad_override_names_the_key_and_lists_valid_ones(override: str, named: str) -> None:
    with pytest.raises(DataError) as info:
        load_data_config(None, [override])
    message = str(info.value)
    assert named in message
    assert "data.source" in message and "data.tiers.<tier>.min_rating" in message
    assert "easy, expert, hard" in message


def test_semantic_errors_are_reported() -> None:
    with pytest.raises(DataError, match="overlaps"):
        load_data_config(None, ["data.tiers.easy.max_rating=1200"])
    with pytest.raises(DataError, match="not a defined tier"):
        load_data_config(None, ["data.tier=medium"])


def test_a_new_tier_can_be_defined_in_conf_data(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    shutil.copytree(builtin_config_dir(), conf)
    common = conf / "data" / "common.yaml"
    common.write_text(
        common.read_text().replace(
            "  expert: {min_rating: 2300, max_rating: 3500}",
            "  expert: {min_rating: 2300, max_rating: 3500}\n"
            "  mid: {min_rating: 1050, max_rating: 1050}",
        )
    )
    cfg = load_data_config(str(conf), ["data.tier=mid"])
    assert cfg.tier == "mid" and cfg.tiers["mid"].min_rating == 1050


def test_language_settings_and_their_errors() -> None:
    cfg = load_data_config(None, [])
    assert (cfg.language, cfg.validate_languages) == ("cpp", ["cpp"])
    assert cfg.time_factors == {"cpp": 1.0, "python": 1.0}
    python = load_data_config(
        None,
        ["data.language=python", "data.validate_languages=[cpp,python]", "time_factors.python=2"],
    )
    assert (python.language, python.validate_languages) == ("python", ["cpp", "python"])
    assert python.time_factors == {"cpp": 1.0, "python": 2.0}
    for override, message in [
        ("data.language=java", r"data\.language='java': use one of cpp, python"),
        ("data.validate_languages=[]", r"data\.validate_languages is empty"),
        ("data.validate_languages=[cpp,rust]", r"unknown language 'rust'"),
        ("data.time_factors.python=0", r"data\.time_factors\.python must be > 0"),
        ("+data.time_factors.go=2", r"data\.time_factors\.go: unknown language"),
    ]:
        with pytest.raises(DataError, match=message):
            load_data_config(None, [override])
