"""`codefu-train` on a prepared dataset it cannot read: one line naming the file and the fix,
exit 2, and no run directory (codefu_trainer.run.prepared_data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codefu_trainer.run.prepared_data import BadInputError, check_chat_prompts, check_manifest
from codefu_trainer.training.cli import main

from ..conftest import CONF


def _train(
    prepared: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cluster: str = "cpu",
    *overrides: str,
) -> tuple[int, str, Path]:
    runs = tmp_path / "runs"
    code = main(
        [
            "--config-dir", str(CONF), f"cluster={cluster}", f"data.out_dir={prepared}",
            f"run.root_dir={runs}", *overrides,
        ]
    )  # fmt: skip
    return code, capsys.readouterr().err, runs


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("split", ["train", "test"])
@pytest.mark.parametrize(
    "damage",
    [
        _truncate,
        lambda p: p.write_bytes(b"PAR1" + bytes(range(256)) * 4),  # garbage with parquet's magic
        lambda p: p.write_bytes(b""),
    ],
    ids=["truncated", "corrupt", "empty"],
)
def test_an_unreadable_parquet_stops_train_with_its_name_and_exit_2(  # type: ignore[no-untyped-def]
    prepared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], split: str, damage
) -> None:
    path = prepared_data / "easy" / f"{split}.parquet"
    damage(path)
    code, err, runs = _train(prepared_data, tmp_path, capsys)
    assert code == 2, err
    assert f"{path}: not a readable parquet file" in err
    assert "data.force=true" in err and "Traceback" not in err
    assert not runs.exists()


def test_a_parquet_without_the_prepared_columns_is_refused(
    prepared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = prepared_data / "easy" / "train.parquet"
    pq.write_table(pa.table({"name": ["1_A"], "description": ["raw, not prepared"]}), path)
    code, err, runs = _train(prepared_data, tmp_path, capsys, cluster="cpu_verl")
    assert code == 2, err
    assert f"{path}: has no column data_source, prompt, reward_model" in err
    assert not runs.exists()


@pytest.mark.parametrize(
    "manifest, found",
    [({"format": 0, "codefu_data_version": "0.0.1"}, "codefu-data 0.0.1 in format 0"),
     ({}, "format None"), ("not json", "not a readable manifest")],
)  # fmt: skip
def test_a_dataset_prepared_by_another_version_is_refused(
    prepared_data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    manifest: object,
    found: str,
) -> None:
    path = prepared_data / "manifest.json"
    path.write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))
    code, err, runs = _train(prepared_data, tmp_path, capsys, cluster="local")
    assert code == 2, err
    assert f"{path}: " in err and found in err
    assert f"data.out_dir={prepared_data} data.force=true" in err
    assert not runs.exists()


def test_prompts_prepared_for_another_language_are_refused(
    prepared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """C++ prompts trained with a Python-only reward would score every answer LANGUAGE (-1)."""
    from codefu_data.prepare import MANIFEST_FORMAT

    path = prepared_data / "manifest.json"
    path.write_text(json.dumps({"format": MANIFEST_FORMAT, "config": {"language": "cpp"}}))
    python = ("data.language=python", "reward.languages=[python]")
    code, err, runs = _train(prepared_data, tmp_path, capsys, "local", *python)
    assert code == 2, err
    assert f"{path}: its prompts ask for cpp (prepared with data.language=cpp)" in err
    assert "data.language=python data.out_dir=DIR" in err and "Traceback" not in err
    assert not runs.exists()
    check_manifest(prepared_data, "cpp")  # the language it was prepared for passes
    path.write_text(json.dumps({"format": MANIFEST_FORMAT}))  # before data.language: C++
    with pytest.raises(BadInputError, match="ask for cpp"):
        check_manifest(prepared_data, "python")
    path.write_text(json.dumps({"format": MANIFEST_FORMAT, "config": {"language": "python"}}))
    check_manifest(prepared_data, "python")


def test_livecodebench_text_prompts_are_for_evaluation_not_training(
    prepared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its DeepSeekR1-style prompts are texts a chat template cannot render: training, which
    renders its prompts with one, refuses them; its chat-style prompts train."""
    from codefu_data.prepare import MANIFEST_FORMAT

    path = prepared_data / "manifest.json"
    text = {"language": "cpp", "prompt": {"style": "livecodebench_deepseek_r1"}}
    path.write_text(json.dumps({"format": MANIFEST_FORMAT, "config": text}))
    code, err, runs = _train(prepared_data, tmp_path, capsys, cluster="local")
    assert code == 2, err
    assert "its prompts are LiveCodeBench's livecodebench_deepseek_r1 texts" in err
    assert not runs.exists()
    chat = {"language": "cpp", "prompt": {"style": "livecodebench"}}
    path.write_text(json.dumps({"format": MANIFEST_FORMAT, "config": chat}))
    check_chat_prompts(prepared_data)
