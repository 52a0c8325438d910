"""End-to-end prepare on a synthetic raw dataset with known flaws."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from codefu_data.config import DataConfig
from codefu_data.prepare import prepare
from codefu_data.reader import DataError, read_processed
from codefu_data.schema import OUTPUT_SCHEMA, RAW_SCHEMA
from codefu_data.synthetic import FLAW_KINDS, FLAW_PERIOD, SyntheticSpec, split_sizes
from codefu_data.tier_writer import TierWriter

TIERS = ("easy", "expert", "hard")


def _files(out: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != ".prepare-stamp.json"
    }


def test_writes_every_tier_in_the_processed_schema(
    spec: SyntheticSpec, make_config: Callable[..., DataConfig], raw_dir: Path, tmp_path: Path
) -> None:
    result = prepare(make_config(raw_dir, tmp_path / "out"), progress=False)
    out = result.out_dir
    assert not result.skipped
    for tier in TIERS:
        for split in ("train", "test"):
            table = read_processed(out / tier / f"{split}.parquet")
            assert table.schema.remove_metadata() == OUTPUT_SCHEMA
            rows = table.to_pylist()
            for i, row in enumerate(rows):
                assert row["data_source"] == "code_contests" and row["ability"] == "coding-cp"
                assert row["extra_info"] == {
                    "index": i,
                    "split": split,
                    "tier": tier,
                    "name": row["extra_info"]["name"],
                    # CodeContests states no difficulty label, platform or contest date.
                    "difficulty": None,
                    "platform": None,
                    "contest_date": None,
                }
                gt = row["reward_model"]["ground_truth"]
                assert row["reward_model"]["style"] == "rule"
                assert gt["name"] == row["extra_info"]["name"]
                assert gt["private_tests"]["input"] and len(gt["private_tests"]["input"]) == len(
                    gt["private_tests"]["output"]
                )
                assert gt["time_limit"]["seconds"] > 0
                assert "Time limit per test" in row["prompt"][0]["content"]
                assert "solution" not in json.dumps(gt)  # ground truth carries tests only
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest == result.manifest
    assert manifest["totals"]["read"] == spec.problems
    kept = sum(manifest["outputs"][t][s]["rows"] for t in TIERS for s in ("train", "test"))
    assert kept == manifest["totals"]["kept"]
    assert kept + sum(manifest["totals"]["dropped"].values()) == spec.problems
    # Every planted flaw is counted under its own reason.
    n_train = split_sizes(spec.problems)["train"]
    for offset, reason in FLAW_KINDS.items():
        expected = len(range(offset, n_train, FLAW_PERIOD))
        planted_dupes = sum(1 for i in (10, 11) if i % FLAW_PERIOD == offset)
        assert manifest["totals"]["dropped"][reason] == expected - planted_dupes, reason
    assert manifest["totals"]["dropped"]["duplicate_of_heldout"] == 2
    assert len(manifest["input"]["sha256"]) == 64 and len(manifest["input"]["files"]) == 4


def test_heldout_problems_never_leak_into_train(
    make_config: Callable[..., DataConfig], raw_dir: Path, tmp_path: Path
) -> None:
    out = prepare(make_config(raw_dir, tmp_path / "out"), progress=False).out_dir
    train_names = set()
    test_names = set()
    for tier in TIERS:
        train_names |= {
            r["name"]
            for r in pq.read_table(out / tier / "train.parquet").column("extra_info").to_pylist()
        }
        test_names |= {
            r["name"]
            for r in pq.read_table(out / tier / "test.parquet").column("extra_info").to_pylist()
        }
    assert test_names and train_names
    assert not train_names & test_names
    raw_train = (
        pq.read_table(raw_dir / "data" / "train-00000-of-00002.parquet", columns=["name"])
        .column("name")
        .to_pylist()
    )
    assert raw_train[11] not in train_names  # same statement as a test problem, other name


def test_output_is_byte_identical_across_runs(
    make_config: Callable[..., DataConfig], raw_dir: Path, tmp_path: Path
) -> None:
    a = prepare(make_config(raw_dir, tmp_path / "a"), progress=False).out_dir
    b = prepare(make_config(raw_dir, tmp_path / "b", force=True), progress=False).out_dir
    fa, fb = _files(a), _files(b)
    assert sorted(fa) == sorted(fb) and "manifest.json" in fa
    assert fa == fb


def test_unchanged_rerun_is_skipped_and_changes_rebuild(
    make_config: Callable[..., DataConfig], raw_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    prepare(make_config(raw_dir, out), progress=False)
    before = _files(out)
    again = prepare(make_config(raw_dir, out), progress=False)
    assert again.skipped and _files(out) == before
    changed = prepare(make_config(raw_dir, out, min_description_chars=10_000), progress=False)
    assert not changed.skipped
    assert changed.manifest["totals"]["kept"] == 0
    forced = prepare(make_config(raw_dir, out, force=True), progress=False)
    assert not forced.skipped and _files(out) == before


def test_an_output_of_an_older_layout_is_rewritten_and_still_read(
    make_config: Callable[..., DataConfig], raw_dir: Path, tmp_path: Path
) -> None:
    """A dataset prepared before extra_info's difficulty, platform and contest date: an
    unchanged rerun rewrites it (train and eval refuse the older manifest format), and its
    parquet still reads as a processed file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from codefu_data.prepare import MANIFEST_FORMAT

    out = tmp_path / "out"
    prepare(make_config(raw_dir, out), progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "format": MANIFEST_FORMAT - 1}))
    again = prepare(make_config(raw_dir, out), progress=False)
    assert not again.skipped and again.manifest["format"] == MANIFEST_FORMAT

    path = out / "easy" / "train.parquet"
    table = pq.read_table(path)
    info = table.column("extra_info").combine_chunks()
    older = pa.StructArray.from_arrays(
        [info.field(name) for name in ("index", "split", "tier", "name")],
        names=["index", "split", "tier", "name"],
    )
    pq.write_table(
        table.set_column(table.schema.get_field_index("extra_info"), "extra_info", older), path
    )
    assert read_processed(path).num_rows == table.num_rows
    three = pa.StructArray.from_arrays(
        [info.field(name) for name in ("index", "split", "tier")], names=["index", "split", "tier"]
    )
    pq.write_table(
        table.set_column(table.schema.get_field_index("extra_info"), "extra_info", three), path
    )
    with pytest.raises(DataError, match="extra_info"):
        read_processed(path)


def test_interrupted_run_leaves_nothing(
    make_config: Callable[..., DataConfig],
    raw_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "out"
    calls = []

    def explode(self: object, table: pa.Table) -> None:
        calls.append(1)
        raise KeyboardInterrupt

    monkeypatch.setattr(TierWriter, "append", explode)
    with pytest.raises(KeyboardInterrupt):
        prepare(make_config(raw_dir, out), progress=False)
    assert calls
    assert list(tmp_path.iterdir()) == []  # no output, no temporary directory


def test_interrupted_rebuild_keeps_the_previous_output(
    make_config: Callable[..., DataConfig],
    raw_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "out"
    prepare(make_config(raw_dir, out), progress=False)
    before = _files(out)

    def explode(self: object, table: pa.Table) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(TierWriter, "append", explode)
    with pytest.raises(RuntimeError):
        prepare(make_config(raw_dir, out, force=True), progress=False)
    assert _files(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_refuses_to_replace_a_foreign_directory(
    make_config: Callable[..., DataConfig], raw_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(DataError, match="not a codefu-data output"):
        prepare(make_config(raw_dir, out), progress=False)
    assert (out / "notes.txt").read_text() == "keep me"


def _raw_rows(raw_dir: Path) -> pa.Table:
    return pq.read_table(raw_dir / "data" / "train-00000-of-00002.parquet")


def test_missing_column_names_file_and_column(
    make_config: Callable[..., DataConfig], raw_dir: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad" / "data"
    bad.mkdir(parents=True)
    pq.write_table(_raw_rows(raw_dir).drop(["cf_rating"]), bad / "train-00000-of-00001.parquet")
    with pytest.raises(
        DataError, match=r"train-00000-of-00001\.parquet: missing column 'cf_rating'"
    ):
        prepare(make_config(bad.parent, tmp_path / "out"), progress=False)
    assert not (tmp_path / "out").exists()


def test_wrong_type_names_the_column(
    make_config: Callable[..., DataConfig], raw_dir: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.parquet"
    table = _raw_rows(raw_dir)
    table = table.set_column(
        table.schema.get_field_index("memory_limit_bytes"),
        "memory_limit_bytes",
        pa.array(["lots"] * table.num_rows),
    )
    pq.write_table(table, bad)
    with pytest.raises(DataError, match=r"bad\.parquet: column 'memory_limit_bytes'"):
        prepare(make_config(bad, tmp_path / "out"), progress=False)
    assert not (tmp_path / "out").exists()


def test_corrupt_file_is_named(
    make_config: Callable[..., DataConfig], raw_dir: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad" / "data"
    bad.mkdir(parents=True)
    (bad / "train-00000-of-00001.parquet").write_bytes(
        (raw_dir / "data" / "train-00000-of-00002.parquet").read_bytes()
    )
    (bad / "test-00000-of-00001.parquet").write_bytes(b"PAR1 this is not parquet at all")
    with pytest.raises(
        DataError, match=r"test-00000-of-00001\.parquet: not a readable parquet file"
    ):
        prepare(make_config(bad.parent, tmp_path / "out"), progress=False)
    assert not (tmp_path / "out").exists()


def test_truncated_row_group_is_named(
    make_config: Callable[..., DataConfig], raw_dir: Path, tmp_path: Path
) -> None:
    src = (raw_dir / "data" / "train-00000-of-00002.parquet").read_bytes()
    bad = tmp_path / "train.parquet"
    meta = pq.read_metadata(raw_dir / "data" / "train-00000-of-00002.parquet")
    start = meta.row_group(1).column(1).data_page_offset
    bad.write_bytes(src[:start] + b"\x00" * 4096 + src[start + 4096 :])
    with pytest.raises(DataError, match=r"train\.parquet: corrupt data in row group"):
        prepare(make_config(bad, tmp_path / "out"), progress=False)
    assert not (tmp_path / "out").exists()


def test_unknown_source(make_config: Callable[..., DataConfig], tmp_path: Path) -> None:
    with pytest.raises(DataError, match="unknown source"):
        prepare(make_config(tmp_path / "nowhere" / "x", tmp_path / "out"), progress=False)
    with pytest.raises(DataError, match="unsupported file type"):
        (tmp_path / "data.csv").write_text("a,b\n")
        prepare(make_config(tmp_path / "data.csv", tmp_path / "out"), progress=False)
    assert not (tmp_path / "out").exists()


def test_jsonl_source_and_its_errors(
    make_config: Callable[..., DataConfig], raw_dir: Path, tmp_path: Path
) -> None:
    rows = _raw_rows(raw_dir).to_pylist()
    good = tmp_path / "train.jsonl"
    good.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = prepare(make_config(good, tmp_path / "out"), progress=False)
    assert result.manifest["totals"]["read"] == len(rows)
    from_parquet = prepare(
        make_config(raw_dir / "data" / "train-00000-of-00002.parquet", tmp_path / "out2"),
        progress=False,
    )
    assert result.manifest["counts"] == from_parquet.manifest["counts"]
    assert pq.read_table(tmp_path / "out" / "hard" / "train.parquet").equals(
        pq.read_table(tmp_path / "out2" / "hard" / "train.parquet")
    )

    broken = tmp_path / "broken" / "train.jsonl"
    broken.parent.mkdir()
    lines = [json.dumps(r) for r in rows[:5]]
    lines[3] = lines[3][:40]
    broken.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"train\.jsonl: line 4 is not valid JSON"):
        prepare(make_config(broken, tmp_path / "out3"), progress=False)
    missing = dict(rows[0])
    del missing["private_tests"]
    broken.write_text(json.dumps(rows[1]) + "\n" + json.dumps(missing) + "\n")
    with pytest.raises(DataError, match=r"line 2 \(row 1\) has no column 'private_tests'"):
        prepare(make_config(broken, tmp_path / "out3"), progress=False)
    typed = dict(rows[0], cf_rating="hard")
    broken.write_text(json.dumps(rows[1]) + "\n" + json.dumps(typed) + "\n")
    with pytest.raises(DataError, match=r"row 1, column 'cf_rating'"):
        prepare(make_config(broken, tmp_path / "out3"), progress=False)
    assert not (tmp_path / "out3").exists()


def test_raw_schema_has_every_codecontests_column() -> None:
    assert len(RAW_SCHEMA) == 20
    assert {"generated_tests", "incorrect_solutions", "cf_tags"} <= set(RAW_SCHEMA.names)


def test_hub_id_without_datasets_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from codefu_data.reader import resolve_source

    monkeypatch.setitem(sys.modules, "datasets", None)  # import now raises ImportError
    with pytest.raises(DataError, match=r"codefu-data\[hub\]"):
        resolve_source("deepmind/code_contests")
