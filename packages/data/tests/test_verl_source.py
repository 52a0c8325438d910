"""A veRL-format parquet (the CodeFu reference's shape) as a `prepare` source."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from codefu_data.config import DataConfig
from codefu_data.formats.verl import statement_from_prompt
from codefu_data.judging_rules import truncated_output
from codefu_data.prepare import ALL_PRIVATE_TESTS_TRUNCATED, prepare
from codefu_data.reader import DataError, read_processed

STATEMENT = 'Print "YES" or "NO".\n\nExamples\n\nInput\n\n1\n\nOutput\n\nYES'


@pytest.mark.parametrize(
    "content",
    [
        # The reference's prompts: a chat template around the instruction and statement.
        f"<|im_start|>user\nWrite a C++ solution.\n\nProblem:\n{STATEMENT}\n<|im_start|>assistant",
        # Ours: instruction, statement, then the limits.
        f"Solve it in C++.\n\nProblem:\n{STATEMENT}\n\nTime limit per test: 1 second\n"
        "Memory limit per test: 256 megabytes",
        f"<|im_start|>user\n{STATEMENT}\n<|im_start|>assistant",  # no "Problem:" line
    ],
)
def test_the_statement_comes_back_from_the_prompt(content: str) -> None:
    messages = [
        {"role": "system", "content": "Problem:\nnot this"},
        {"role": "user", "content": content},
    ]
    assert statement_from_prompt(messages) == STATEMENT


def _as_verl(out: Path, into: Path) -> Path:
    """The prepared easy tier rewritten in the reference's shape (no extra_info, no rules,
    no checker, no grader)."""
    into.mkdir()
    for split in ("train", "test"):
        rows = pq.read_table(out / "easy" / f"{split}.parquet").to_pylist()
        for row in rows:
            del row["extra_info"]
            del row["reward_model"]["ground_truth"]["judging_rules"]
            del row["reward_model"]["ground_truth"]["checker"]
            del row["reward_model"]["ground_truth"]["grader"]
        pq.write_table(pa.Table.from_pylist(rows), into / f"{split}.parquet")
    return into


def test_prepared_again_from_its_verl_form_it_keeps_problems_tests_and_rules(
    tmp_path: Path,
) -> None:
    prepare(DataConfig(source="sample", out_dir=str(tmp_path / "a")), progress=False)
    verl = _as_verl(tmp_path / "a", tmp_path / "verl")
    assert read_processed(verl / "train.parquet").num_rows  # the reference's shape is read
    again = prepare(DataConfig(source=str(verl), out_dir=str(tmp_path / "b")), progress=False)
    assert again.manifest["judging_rules"]["tolerance"]["kept"] > 0
    # Same problems, tests, limits and rules (read back from the prompts), same prompts.
    for split in ("train", "test"):
        a = pq.read_table(tmp_path / "a" / "easy" / f"{split}.parquet").to_pylist()
        b = pq.read_table(tmp_path / "b" / "easy" / f"{split}.parquet").to_pylist()
        assert [r["reward_model"] for r in a] == [r["reward_model"] for r in b]
        assert [r["prompt"] for r in a] == [r["prompt"] for r in b]


# How a ground truth stored a grader before its parameters were their JSON text
# (manifest format 3): one field per parameter of a fixed set, null when unused.
OLD_GRADER_TYPE = pa.struct(
    [
        ("name", pa.string()),
        ("params", pa.struct([(k, pa.string()) for k in ("fn_name", "prelude", "compare")])),
    ]
)


def test_a_ground_truth_with_the_old_grader_struct_reads_as_a_source(tmp_path: Path) -> None:
    """Data prepared by an earlier version is refused as a run's input (its manifest format:
    `codefu_trainer.run.prepared_data`), and read again as a source: its graders become
    what the grader defines, stored as their JSON text."""
    prepare(DataConfig(source="sample", out_dir=str(tmp_path / "a")), progress=False)
    table = pq.read_table(tmp_path / "a" / "easy" / "train.parquet")
    rows = table.to_pylist()
    old = {
        "name": "stdio",
        "params": {"fn_name": None, "prelude": "livecodebench", "compare": None},
    }
    for row in rows:
        row["reward_model"]["ground_truth"]["grader"] = old
    gt_type = table.schema.field("reward_model").type.field("ground_truth").type
    fields = [f if f.name != "grader" else pa.field("grader", OLD_GRADER_TYPE) for f in gt_type]
    reward_model = pa.struct([("ground_truth", pa.struct(fields)), ("style", pa.string())])
    schema = table.schema.set(
        table.schema.get_field_index("reward_model"), pa.field("reward_model", reward_model)
    )
    (tmp_path / "old").mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp_path / "old" / "train.parquet")
    prepare(DataConfig(source=str(tmp_path / "old"), out_dir=str(tmp_path / "b")), progress=False)
    again = pq.read_table(tmp_path / "b" / "easy" / "train.parquet").to_pylist()
    assert again and all(
        r["reward_model"]["ground_truth"]["grader"]
        == {"name": "stdio", "params": '{"prelude": "livecodebench"}'}
        for r in again
    )


def test_validation_needs_raw_codecontests(tmp_path: Path) -> None:
    prepare(DataConfig(source="sample", out_dir=str(tmp_path / "a")), progress=False)
    verl = _as_verl(tmp_path / "a", tmp_path / "verl")
    with pytest.raises(DataError, match=r"no solutions .* raw CodeContests"):
        prepare(DataConfig(source=str(verl), out_dir=str(tmp_path / "b"), validate=True))


def test_truncated_expected_outputs_are_dropped_and_counted(tmp_path: Path) -> None:
    prepare(DataConfig(source="sample", out_dir=str(tmp_path / "a")), progress=False)
    verl = _as_verl(tmp_path / "a", tmp_path / "verl")
    table = pq.read_table(verl / "train.parquet")
    rows = table.to_pylist()
    cut = " ".join(str(i) for i in range(200))[:511] + "..."  # as CodeContests cut them
    assert truncated_output(cut)
    gt0 = rows[0]["reward_model"]["ground_truth"]
    gt0["private_tests"]["output"][0] = cut  # one cut test among several
    gt1 = rows[1]["reward_model"]["ground_truth"]
    gt1["private_tests"]["output"] = [cut] * len(gt1["private_tests"]["output"])  # all cut
    kept_tests = len(gt0["private_tests"]["output"]) - 1
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), verl / "train.parquet")
    result = prepare(DataConfig(source=str(verl), out_dir=str(tmp_path / "b")), progress=False)
    assert result.manifest["tests_dropped"]["truncated_output"] == 1 + len(
        gt1["private_tests"]["output"]
    )
    counts = result.manifest["counts"]["easy"]["train"]
    assert counts["dropped"][ALL_PRIVATE_TESTS_TRUNCATED] == 1
    out = {
        r["reward_model"]["ground_truth"]["name"]: r["reward_model"]["ground_truth"]
        for r in pq.read_table(tmp_path / "b" / "easy" / "train.parquet").to_pylist()
    }
    assert gt1["name"] not in out
    assert len(out[gt0["name"]]["private_tests"]["output"]) == kept_tests
    assert cut not in out[gt0["name"]]["private_tests"]["output"]
