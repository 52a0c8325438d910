"""`prepare`: raw CodeContests → filtered, tiered veRL parquet + manifest.json.

Splits: raw `train` → `train`, raw `valid` and `test` → `test` (`data.split_map`); the
held-out split (`test`) keeps cross-split duplicates, every other split drops them.

Two streaming passes over the source: (1) names and statements only, to find duplicates;
(2) the needed columns a row group at a time: filter, tier, (validate,) build prompts and
append to one parquet writer per tier and split. Everything goes to a temporary directory
beside the output, renamed into place at the end, so an interrupted run never leaves a
half-written dataset. The same input and config give byte-identical parquet files and
manifest. A stamp (input sizes/mtimes + config digest) lets an unchanged rerun return at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from tqdm import tqdm

from codefu_data import __version__
from codefu_data.checkers import (
    Checker,
    CheckerCandidate,
    checker_config,
    checker_from_column,
    checker_from_folder,
    validate_checker,
)
from codefu_data.config import DataConfig, check_config
from codefu_data.filters import DuplicateIndex, ProblemMeta, quality_reason
from codefu_data.judging_rules import (
    JudgingRules,
    rules_from_statement,
    truncated_output,
)
from codefu_data.prompts import build_messages
from codefu_data.reader import DataError, Source, resolve_source
from codefu_data.schema import (
    ABILITY,
    CHECKER_TYPE,
    DATA_SOURCE,
    EXTRA_INFO_TYPE,
    GROUND_TRUTH_TYPE,
    JUDGING_RULES_TYPE,
    OUTPUT_SCHEMA,
    PROMPT_TYPE,
    REQUIRED_COLUMNS,
    REWARD_MODEL_TYPE,
    TESTS_TYPE,
    VALIDATION_COLUMNS,
    judge_time_seconds,
    time_limit_seconds,
)
from codefu_data.solutions import cpp_programs
from codefu_data.tiers import assign_tier
from codefu_data.validate import NO_PRIVATE_TESTS_AFTER_VALIDATION, Candidate, Validator
from codefu_sandbox import Judge
from codefu_sandbox.rules import checker_params

MANIFEST = "manifest.json"
# The layout of manifest.json and the processed parquet: raised when either changes, so a
# trainer can tell a dataset prepared by another version (codefu_trainer.training.prepared_data).
MANIFEST_FORMAT = 1
STAMP = ".prepare-stamp.json"
UNTIERED = "untiered"
FLUSH_ROWS = 1024
FLUSH_BYTES = 32 << 20
# Drop reasons of the judging rules (docs/ARCHITECTURE.md, "Judging rules").
SEVERAL_VALID_ANSWERS = "several_valid_answers"
ALL_PRIVATE_TESTS_TRUNCATED = "all_private_tests_truncated"
# Outputs worth asking `truncated_output` about: those ending in an ellipsis.
TRUNCATION_HINT = r"(?:\.\.\.|…)\s*$"
RULE_NAMES = ("any_case", "tolerance", "several_answers", "any_order")


def rule_names(rules: JudgingRules) -> list[str]:
    """The rules a problem's statement states (names of `RULE_NAMES`)."""
    return [
        name
        for name, present in zip(
            RULE_NAMES,
            (
                bool(rules.any_case_words),
                rules.float_tolerance is not None,
                rules.several_answers,
                bool(rules.any_order),
            ),
            strict=True,
        )
        if present
    ]


def judged_against_one_answer(rules: JudgingRules) -> bool:
    """Several outputs are valid and the checker can only compare with the expected one
    (a free order alone is judged by `codecontests`' `any_order`)."""
    return rules.several_answers and not rules.any_order


@dataclass
class PrepareStats:
    """Manifest counts beside kept/dropped per reason: the judging rules found among the
    problems that passed every other filter and kept in the output, and the tests dropped
    for a truncated expected output."""

    rules_found: dict[str, int] = dataclasses.field(
        default_factory=lambda: dict.fromkeys(RULE_NAMES, 0)
    )
    rules_kept: dict[str, int] = dataclasses.field(
        default_factory=lambda: dict.fromkeys(RULE_NAMES, 0)
    )
    truncated_tests: int = 0
    # problem name → its checker's validation (`CheckerVerdict.to_dict`)
    checkers: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    several_with_checker: int = 0  # several-answer problems kept, judged by their checker

    def found(self, rules: JudgingRules) -> None:
        for name in rule_names(rules):
            self.rules_found[name] += 1

    def kept(self, rules: JudgingRules) -> None:
        for name in rule_names(rules):
            self.rules_kept[name] += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "judging_rules": {
                name: {"found": self.rules_found[name], "kept": self.rules_kept[name]}
                for name in RULE_NAMES
            },
            "tests_dropped": {"truncated_output": self.truncated_tests},
            "checkers": dict(sorted(self.checkers.items())),
            "several_answers_kept_with_checker": self.several_with_checker,
        }


@dataclass
class PrepareResult:
    out_dir: Path
    manifest: dict[str, Any]
    skipped: bool  # True: the output was already up to date


def config_digest(cfg: DataConfig) -> tuple[dict[str, Any], str]:
    """The config that decides the output and its sha256.

    Leaves out what does not change the files: where they go, `force`, the judge's worker
    count, and `tier` (prepare writes every tier; `tier` only picks the one training reads).
    """
    values = dataclasses.asdict(cfg)
    for key in ("out_dir", "force", "validate_workers", "tier"):
        values.pop(key)
    values["checkers"].pop("workers")
    if cfg.checkers.enabled():
        values["checkers"]["files_sha256"] = _checker_files_digest(cfg)
    text = json.dumps(values, sort_keys=True)
    return values, hashlib.sha256(f"{__version__}\n{text}".encode()).hexdigest()


def _checker_files_digest(cfg: DataConfig) -> str:
    """sha256 of the checker folder's .cpp/.py files (names and contents) and testlib.h:
    editing a checker makes the output out of date."""
    h = hashlib.sha256()
    paths: list[Path] = []
    if cfg.checkers.folder:
        folder = Path(cfg.checkers.folder).expanduser()
        paths += sorted(p for p in folder.iterdir() if p.suffix in (".cpp", ".py"))
    if cfg.checkers.testlib:
        paths.append(Path(cfg.checkers.testlib).expanduser())
    for path in paths:
        h.update(path.name.encode() + b"\0" + _file_sha256(path).encode() + b"\0")
    return h.hexdigest()


def output_splits(cfg: DataConfig) -> list[str]:
    return sorted(set(cfg.split_map.values()))


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


class _TierWriter:
    """One output parquet file, appended in row groups of bounded size."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.writer = pq.ParquetWriter(path, OUTPUT_SCHEMA, compression="zstd")
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self.pending_bytes = 0
        self.rows = 0

    def append(self, table: pa.Table) -> None:
        self.pending.append(table)
        self.pending_rows += table.num_rows
        self.pending_bytes += table.nbytes
        self.rows += table.num_rows
        if self.pending_rows >= FLUSH_ROWS or self.pending_bytes >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.writer.write_table(pa.concat_tables(self.pending))
            self.pending, self.pending_rows, self.pending_bytes = [], 0, 0

    def close(self) -> None:
        self.flush()
        self.writer.close()


def _tests_counts(col: pa.ChunkedArray) -> list[int]:
    """Number of tests per row; -1 when inputs and outputs differ in count; 0 when null."""
    arr = col.combine_chunks()
    n_in = pc.fill_null(pc.list_value_length(pc.struct_field(arr, "input")), 0).to_pylist()
    n_out = pc.fill_null(pc.list_value_length(pc.struct_field(arr, "output")), 0).to_pylist()
    return [a if a == b else -1 for a, b in zip(n_in, n_out, strict=True)]


def _non_null_tests(arr: pa.Array) -> pa.Array:
    """Tests struct with nulls (struct or lists) replaced by empty lists."""
    if arr.null_count == 0 and all(arr.field(i).null_count == 0 for i in range(2)):
        return arr
    rows = [
        {"input": (v or {}).get("input") or [], "output": (v or {}).get("output") or []}
        for v in arr.to_pylist()
    ]
    return pa.array(rows, type=TESTS_TYPE)


def _build_rows(
    sub: pa.Table,
    *,
    prompts: list[list[dict[str, str]]],
    rules: list[JudgingRules],
    split: str,
    tier: str,
    first_index: int,
    tests_override: tuple[list[dict[str, list[str]]], list[dict[str, list[str]]]] | None,
    checkers: list[dict[str, Any] | None] | None = None,
) -> pa.Table:
    n = sub.num_rows
    if tests_override is None:
        public = _non_null_tests(sub.column("public_tests").combine_chunks())
        private = _non_null_tests(sub.column("private_tests").combine_chunks())
    else:
        public = pa.array(tests_override[0], type=TESTS_TYPE)
        private = pa.array(tests_override[1], type=TESTS_TYPE)
    tl = sub.column("time_limit").combine_chunks()
    time_limit = pa.StructArray.from_arrays(
        [
            pc.fill_null(pc.struct_field(tl, "nanos"), 0).cast(pa.float64()),
            pc.struct_field(tl, "seconds").cast(pa.float64()),
        ],
        fields=list(GROUND_TRUTH_TYPE.field("time_limit").type),
    )
    ground_truth = pa.StructArray.from_arrays(
        [
            pc.fill_null(sub.column("cf_rating").combine_chunks(), 0).cast(pa.int64()),
            sub.column("memory_limit_bytes").combine_chunks().cast(pa.int64()),
            sub.column("name").combine_chunks(),
            private,
            public,
            time_limit,
            pa.array([r.to_dict() for r in rules], JUDGING_RULES_TYPE),
            pa.array(checkers or [None] * n, CHECKER_TYPE),
        ],
        fields=list(GROUND_TRUTH_TYPE),
    )
    reward_model = pa.StructArray.from_arrays(
        [ground_truth, pa.array(["rule"] * n, pa.string())], fields=list(REWARD_MODEL_TYPE)
    )
    extra_info = pa.StructArray.from_arrays(
        [
            pa.array(range(first_index, first_index + n), pa.int64()),
            pa.array([split] * n, pa.string()),
            pa.array([tier] * n, pa.string()),
            sub.column("name").combine_chunks(),
        ],
        fields=list(EXTRA_INFO_TYPE),
    )
    return pa.Table.from_arrays(
        [
            pa.array([DATA_SOURCE] * n, pa.string()),
            pa.array(prompts, PROMPT_TYPE),
            pa.array([ABILITY] * n, pa.string()),
            reward_model,
            extra_info,
        ],
        schema=OUTPUT_SCHEMA,
    )


def _is_codefu_output(out: Path) -> bool:
    return (out / MANIFEST).is_file()


def _up_to_date(out: Path, source: Source, digest: str, cfg: DataConfig) -> dict[str, Any] | None:
    stat_key = source.stat_key()
    if stat_key is None or not (out / STAMP).is_file() or not (out / MANIFEST).is_file():
        return None
    try:
        stamp = json.loads((out / STAMP).read_text())
        manifest = json.loads((out / MANIFEST).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if stamp.get("stat_key") != stat_key or stamp.get("config_sha256") != digest:
        return None
    for tier in cfg.tiers:
        for split in output_splits(cfg):
            if not (out / tier / f"{split}.parquet").is_file():
                return None
    return manifest


def prepare(
    cfg: DataConfig, *, progress: bool = True, log: Callable[[str], None] = print
) -> PrepareResult:
    """Write `cfg.out_dir/<tier>/<split>.parquet` and `manifest.json` (see module docstring)."""
    try:
        check_config(cfg)
    except ValueError as exc:
        raise DataError(str(exc)) from exc
    source = resolve_source(cfg.source)
    columns = list(REQUIRED_COLUMNS) + (list(VALIDATION_COLUMNS) if cfg.validate else [])
    if cfg.checkers.enabled():
        wanted = ["solutions", "incorrect_solutions", cfg.checkers.column or ""]
        columns += [c for c in wanted if c and c not in columns]
    source.check_columns(columns)
    out = Path(cfg.out_dir).expanduser().resolve()
    config_values, digest = config_digest(cfg)

    if not cfg.force and (manifest := _up_to_date(out, source, digest, cfg)) is not None:
        log(f"{out} is up to date with the source and config (pass data.force=true to rebuild).")
        return PrepareResult(out, manifest, skipped=True)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not _is_codefu_output(out))):
        raise DataError(
            f"{out} exists and is not a codefu-data output (no {MANIFEST}); "
            "choose an empty or new --out."
        )
    made = [d for d in (out.parent, *out.parent.parents) if not d.exists()]
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in out.parent.glob(f".{out.name}.partial-*"):
        shutil.rmtree(stale, ignore_errors=True)  # left by a killed run
    tmp = out.parent / f".{out.name}.partial-{os.getpid()}"
    tmp.mkdir()
    try:
        manifest = _run(
            cfg,
            source=source,
            columns=columns,
            tmp=tmp,
            config_values=config_values,
            progress=progress,
        )
        found = manifest["judging_rules"]
        several = (
            found["several_answers"]["kept"]
            - found["any_order"]["kept"]
            - manifest["several_answers_kept_with_checker"]
        )
        if cfg.keep_several_answers and several:
            log(
                f"warning: kept {several} problems whose statement accepts several valid answers "
                "(data.keep_several_answers=true); they are judged against one expected output, "
                "so a correct program printing another valid answer scores as wrong."
            )
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        stat_key = source.stat_key()
        if stat_key is not None:
            (tmp / STAMP).write_text(
                json.dumps({"stat_key": stat_key, "config_sha256": digest}) + "\n"
            )
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        if out.exists():
            out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        for directory in made:  # the folders made for the output: a failure leaves none
            try:
                directory.rmdir()
            except OSError:
                break
        raise
    return PrepareResult(out, manifest, skipped=False)


Counts = dict[str, dict[str, dict[str, int]]]  # tier → split → reason (or "kept") → n


def _out_split(cfg: DataConfig, raw: str, origin: str) -> str:
    if raw not in cfg.split_map:
        raise DataError(
            f"{origin}: raw split {raw!r} has no entry in data.split_map {dict(cfg.split_map)}."
        )
    return cfg.split_map[raw]


def _scan_duplicates(cfg: DataConfig, source: Source, progress: bool) -> DuplicateIndex:
    """Pass 1: duplicates, from names and statements only."""
    dupes = DuplicateIndex(cfg.heldout_split)
    ordinals: dict[str, int] = defaultdict(int)
    bar = tqdm(
        total=source.num_rows(), desc="scan for duplicates", unit="problem", disable=not progress
    )
    for batch in source.iter_batches(["name", "description"], cfg.batch_size):
        split = _out_split(cfg, batch.split, batch.origin)
        names = batch.table.column("name").to_pylist()
        descs = batch.table.column("description").to_pylist()
        for name, desc in zip(names, descs, strict=True):
            dupes.add(split, ordinals[split], name, desc)
            ordinals[split] += 1
        bar.update(batch.table.num_rows)
    bar.close()
    return dupes


def _run(
    cfg: DataConfig,
    *,
    source: Source,
    columns: list[str],
    tmp: Path,
    config_values: dict[str, Any],
    progress: bool,
) -> dict[str, Any]:
    """Both passes over the source; returns the manifest."""
    dupes = _scan_duplicates(cfg, source, progress)
    # Pass 2: filter, tier, validate, write.
    writers = {
        (t, s): _TierWriter(tmp / t / f"{s}.parquet")
        for t in sorted(cfg.tiers)
        for s in output_splits(cfg)
    }
    counts: Counts = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    validator = Validator(cfg) if cfg.validate else None
    checker_judge = Judge() if cfg.checkers.enabled() else None
    stats = PrepareStats()
    ordinals: dict[str, int] = defaultdict(int)
    read_by_split: dict[str, int] = defaultdict(int)
    bar = tqdm(total=source.num_rows(), desc="filter + write", unit="problem", disable=not progress)
    try:
        for batch in source.iter_batches(columns, cfg.batch_size):
            read_by_split[batch.split] += batch.table.num_rows
            _process_batch(
                cfg,
                table=batch.table,
                split=_out_split(cfg, batch.split, batch.origin),
                dupes=dupes,
                ordinals=ordinals,
                counts=counts,
                stats=stats,
                writers=writers,
                validator=validator,
                checker_judge=checker_judge,
            )
            bar.update(batch.table.num_rows)
    finally:
        bar.close()
        for w in writers.values():
            w.close()
    return {
        "format": MANIFEST_FORMAT,
        "codefu_data_version": __version__,
        "input": source.fingerprint(),
        "config": config_values,
        "read": dict(sorted(read_by_split.items())),
        **_output_counts(writers, counts, read_by_split),
        **stats.as_dict(),
        "validation": validator.stats.as_dict() if validator else None,
    }


def _output_counts(
    writers: dict[tuple[str, str], _TierWriter], counts: Counts, read_by_split: dict[str, int]
) -> dict[str, Any]:
    """The manifest's outputs (files, rows, digests), counts per tier and split, totals."""
    outputs: dict[str, dict[str, Any]] = {}
    for (tier, split), w in sorted(writers.items()):
        outputs.setdefault(tier, {})[split] = {
            "file": f"{tier}/{split}.parquet",
            "rows": w.rows,
            "sha256": _file_sha256(w.path),
        }
    plain_counts = {
        tier: {
            s: {
                "kept": c.get("kept", 0),
                "dropped": {k: v for k, v in sorted(c.items()) if k != "kept"},
            }
            for s, c in sorted(by_split.items())
        }
        for tier, by_split in sorted(counts.items())
    }
    dropped_total: dict[str, int] = defaultdict(int)
    for by_split in counts.values():
        for c in by_split.values():
            for reason, n in c.items():
                if reason != "kept":
                    dropped_total[reason] += n
    return {
        "outputs": outputs,
        "counts": plain_counts,
        "totals": {
            "read": sum(read_by_split.values()),
            "kept": sum(w.rows for w in writers.values()),
            "dropped": dict(sorted(dropped_total.items())),
        },
    }


def _process_batch(
    cfg: DataConfig,
    *,
    table: pa.Table,
    split: str,
    dupes: DuplicateIndex,
    ordinals: dict[str, int],
    counts: Counts,
    stats: PrepareStats,
    writers: dict[tuple[str, str], _TierWriter],
    validator: Validator | None,
    checker_judge: Any = None,
) -> None:
    names = table.column("name").to_pylist()
    descs = table.column("description").to_pylist()
    sources = table.column("source").to_pylist()
    ratings = table.column("cf_rating").to_pylist()
    times = table.column("time_limit").to_pylist()
    mems = table.column("memory_limit_bytes").to_pylist()
    n_public = _tests_counts(table.column("public_tests"))
    n_private = _tests_counts(table.column("private_tests"))

    kept: dict[str, list[int]] = defaultdict(list)
    rules: dict[int, JudgingRules] = {}
    checkers: dict[int, Checker] = {}
    for i in range(table.num_rows):
        meta = ProblemMeta(
            name=names[i],
            description=descs[i],
            source=sources[i],
            cf_rating=ratings[i],
            time_limit_seconds=time_limit_seconds(times[i]),
            memory_limit_bytes=mems[i],
            public_tests=n_public[i],
            private_tests=n_private[i],
        )
        ordinal = ordinals[split]
        ordinals[split] += 1
        tier, tier_reason = assign_tier(meta.source, meta.cf_rating, cfg)
        reason = (
            quality_reason(meta, cfg)
            or dupes.reason(split, ordinal, meta.name, meta.description)
            or tier_reason
        )
        if reason is None and tier is not None:
            rules[i] = rules_from_statement(descs[i])
            stats.found(rules[i])
            checker = _checker_of(cfg, table, i, names[i])
            if checker is not None:
                checkers[i] = checker
            elif judged_against_one_answer(rules[i]) and not cfg.keep_several_answers:
                reason = SEVERAL_VALID_ANSWERS
        counts[tier or UNTIERED][split][reason or "kept"] += 1
        if reason is None and tier is not None:
            kept[tier].append(i)

    for tier in sorted(kept):
        rows = kept[tier]
        overrides = _without_truncated_outputs(table, rows, stats)
        if overrides is not None:
            rows, overrides = _drop_untestable(rows, overrides, counts[tier][split])
        if validator is not None:
            rows, overrides = _validate(
                validator,
                table=table,
                rows=rows,
                rules=[rules[i] for i in rows],
                tests=overrides,
                tier=tier,
                split=split,
                counts=counts,
                skip=set(checkers),
            )
        checker_sources: dict[int, str] = {}
        if checker_judge is not None and any(i in checkers for i in rows):
            rows, overrides, checker_sources = _validate_checkers(
                cfg,
                checker_judge,
                table=table,
                rows=rows,
                checkers=checkers,
                tests=overrides,
                stats=stats,
                counts=counts[tier][split],
            )
        if not rows:
            continue
        for i in rows:
            stats.kept(rules[i])
            if i in checker_sources and rules[i].several_answers:
                stats.several_with_checker += 1
        sub = table.take(pa.array(rows, pa.int64()))
        prompts = [
            build_messages(
                cfg.prompt,
                name=names[i],
                description=descs[i],
                time_limit_seconds=time_limit_seconds(times[i]) or 0.0,
                memory_bytes=mems[i],
            )
            for i in rows
        ]
        w = writers[(tier, split)]
        w.append(
            _build_rows(
                sub,
                prompts=prompts,
                rules=[rules[i] for i in rows],
                split=split,
                tier=tier,
                first_index=w.rows,
                tests_override=overrides,
                checkers=[
                    checker_config(checkers[i], checker_sources[i], cfg.checkers)
                    if i in checker_sources
                    else None
                    for i in rows
                ],
            )
        )


TestsOverride = tuple[list[dict[str, list[str]]], list[dict[str, list[str]]]]


def _tests_of(value: dict[str, Any] | None) -> dict[str, list[str]]:
    value = value or {}
    return {"input": list(value.get("input") or []), "output": list(value.get("output") or [])}


def _without_truncated_outputs(
    table: pa.Table, rows: list[int], stats: PrepareStats
) -> TestsOverride | None:
    """The (public, private) tests of `rows` without the tests whose expected output is
    visibly truncated; None when no row has such a test (the tests stay in Arrow)."""
    suspects: set[int] = set()
    for column in ("public_tests", "private_tests"):
        outputs = pc.struct_field(table.column(column).combine_chunks(), "output")
        ends = pc.match_substring_regex(pc.list_flatten(outputs), TRUNCATION_HINT)
        if not pc.any(ends).as_py():
            continue
        parents = pc.list_parent_indices(outputs).to_numpy()
        suspects.update(int(p) for p in parents[ends.to_numpy(zero_copy_only=False)])
    if not suspects.intersection(rows):
        return None
    sub = table.take(pa.array(rows, pa.int64()))
    publics, privates = [], []
    for public, private in zip(
        sub.column("public_tests").to_pylist(), sub.column("private_tests").to_pylist(), strict=True
    ):
        kept_sets = []
        for tests in (_tests_of(public), _tests_of(private)):
            keep = [j for j, out in enumerate(tests["output"]) if not truncated_output(out)]
            stats.truncated_tests += len(tests["output"]) - len(keep)
            kept_sets.append(
                {
                    "input": [tests["input"][j] for j in keep],
                    "output": [tests["output"][j] for j in keep],
                }
            )
        publics.append(kept_sets[0])
        privates.append(kept_sets[1])
    return publics, privates


def _drop_untestable(
    rows: list[int], tests: TestsOverride, counts: dict[str, int]
) -> tuple[list[int], TestsOverride]:
    """Drop the rows left without a private test (reason `all_private_tests_truncated`)."""
    kept_rows: list[int] = []
    publics, privates = [], []
    for row, public, private in zip(rows, *tests, strict=True):
        if not private["input"]:
            counts["kept"] -= 1
            counts[ALL_PRIVATE_TESTS_TRUNCATED] += 1
            continue
        kept_rows.append(row)
        publics.append(public)
        privates.append(private)
    return kept_rows, (publics, privates)


def _validate(
    validator: Validator,
    *,
    table: pa.Table,
    rows: list[int],
    rules: list[JudgingRules],
    tests: TestsOverride | None,
    tier: str,
    split: str,
    counts: Counts,
    skip: Collection[int] = (),
) -> tuple[list[int], TestsOverride]:
    """Run the accepted solutions; returns the rows still kept and their (public, private) tests.

    Rows in `skip` (those with a checker program, validated by `_validate_checkers`) are
    kept as they are."""
    sub = table.take(pa.array(rows, pa.int64())).to_pylist()
    if tests is None:
        tests = (
            [_tests_of(r["public_tests"]) for r in sub],
            [_tests_of(r["private_tests"]) for r in sub],
        )
    candidates = []
    for row, r, rule, pub, priv in zip(rows, sub, rules, *tests, strict=True):
        pairs = list(zip(pub["input"], pub["output"], strict=True)) + list(
            zip(priv["input"], priv["output"], strict=True)
        )
        candidates.append(
            Candidate(
                pairs,
                judge_time_seconds(r["time_limit"], scale=validator.cfg.time_limit_scale),
                r["memory_limit_bytes"],
                None if row in skip else r.get("solutions"),
                checker_params(validator.cfg.validate_checker, rule),
            )
        )
    decisions = validator.run(candidates)
    kept_rows: list[int] = []
    publics: list[dict[str, list[str]]] = []
    privates: list[dict[str, list[str]]] = []
    for row, pub, cand, d in zip(rows, tests[0], candidates, decisions, strict=True):
        n_pub = len(pub["input"])
        keep = range(len(cand.tests)) if d is None else d.kept_tests
        reason = None if d is None else d.reason
        pub_idx = [t for t in keep if t < n_pub]
        priv_idx = [t for t in keep if t >= n_pub]
        if reason is None and not priv_idx:
            reason = NO_PRIVATE_TESTS_AFTER_VALIDATION
        if reason is not None:
            counts[tier][split]["kept"] -= 1
            counts[tier][split][reason] += 1
            continue
        kept_rows.append(row)
        publics.append(
            {
                "input": [cand.tests[t][0] for t in pub_idx],
                "output": [cand.tests[t][1] for t in pub_idx],
            }
        )
        privates.append(
            {
                "input": [cand.tests[t][0] for t in priv_idx],
                "output": [cand.tests[t][1] for t in priv_idx],
            }
        )
    return kept_rows, (publics, privates)


def _checker_of(cfg: DataConfig, table: pa.Table, row: int, name: str) -> Checker | None:
    """Problem `name`'s checker from the configured column, else from the folder."""
    checks = cfg.checkers
    if checks.column:
        found = checker_from_column(table.column(checks.column)[row].as_py(), checks.language)
        if found is not None:
            return found
    if checks.folder:
        try:
            return checker_from_folder(Path(checks.folder).expanduser(), name)
        except ValueError as exc:
            raise DataError(str(exc)) from exc
    return None


def _validate_checkers(
    cfg: DataConfig,
    judge: Any,
    *,
    table: pa.Table,
    rows: list[int],
    checkers: dict[int, Checker],
    tests: TestsOverride | None,
    stats: PrepareStats,
    counts: dict[str, int],
) -> tuple[list[int], TestsOverride, dict[int, str]]:
    """Validate the checker of each row that has one on all its tests; returns the rows
    kept, their tests, and the source to judge with (testlib.h inlined) per kept row."""
    sub = table.take(pa.array(rows, pa.int64())).to_pylist()
    if tests is None:
        tests = (
            [_tests_of(r["public_tests"]) for r in sub],
            [_tests_of(r["private_tests"]) for r in sub],
        )
    kept_rows: list[int] = []
    publics: list[dict[str, list[str]]] = []
    privates: list[dict[str, list[str]]] = []
    sources: dict[int, str] = {}
    for row, r, pub, priv in zip(rows, sub, *tests, strict=True):
        if row in checkers:
            pairs = list(zip(pub["input"], pub["output"], strict=True)) + list(
                zip(priv["input"], priv["output"], strict=True)
            )
            verdict = validate_checker(
                judge,
                CheckerCandidate(
                    name=r["name"],
                    checker=checkers[row],
                    tests=pairs,
                    time_seconds=judge_time_seconds(
                        r["time_limit"], scale=cfg.time_limit_scale, default=1.0
                    ),
                    memory_bytes=r["memory_limit_bytes"],
                    accepted=cpp_programs(r.get("solutions")),
                    incorrect=cpp_programs(r.get("incorrect_solutions")),
                ),
                cfg.checkers,
            )
            stats.checkers[r["name"]] = verdict.to_dict()
            if verdict.reason is not None:
                counts["kept"] -= 1
                counts[verdict.reason] += 1
                continue
            sources[row] = verdict.source
        kept_rows.append(row)
        publics.append(pub)
        privates.append(priv)
    return kept_rows, (publics, privates), sources
