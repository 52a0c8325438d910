"""`prepare`: raw problems (CodeContests and the other source formats) → filtered, tiered
veRL parquet + manifest.json.

Splits: raw `train` → `train`, raw `valid` and `test` → `test` (`data.split_map`); the
held-out split (`test`) keeps cross-split duplicates, every other split drops them.

Two streaming passes over the source: (1) names and statements only, to find duplicates
(and contest dates, when a date window is set: a window that selects nothing stops here);
(2) the needed columns a row group at a time: filter, tier, (validate,) build prompts and
append to one parquet writer per tier and split. Everything goes to a temporary directory
beside the output, renamed into place at the end, so an interrupted run never leaves a
half-written dataset. The same input and config give byte-identical parquet files and
manifest. A stamp (input sizes/mtimes + config digest) lets an unchanged rerun return at once.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from codefu_data import __version__
from codefu_data.batch import (
    SEVERAL_VALID_ANSWERS,
    UNTIERED,
    judged_against_one_answer,
    process_batch,
)
from codefu_data.clean_tests import ALL_PRIVATE_TESTS_TRUNCATED
from codefu_data.config import DataConfig, check_config, date_window, read_options
from codefu_data.filters import (
    NO_CONTEST_DATE,
    OUTSIDE_DATE_WINDOW,
    DuplicateIndex,
    window_reason,
)
from codefu_data.manifest import (
    MANIFEST,
    MANIFEST_FORMAT,
    RULE_NAMES,
    STAMP,
    Counts,
    PrepareStats,
    config_digest,
    is_codefu_output,
    output_counts,
    output_splits,
    rule_names,
    up_to_date,
)
from codefu_data.reader import DataError, Source, resolve_source
from codefu_data.schema import REQUIRED_COLUMNS, VALIDATION_COLUMNS
from codefu_data.tier_writer import TierWriter
from codefu_data.validate import Validator
from codefu_sandbox import Judge


@dataclass
class PrepareResult:
    out_dir: Path
    manifest: dict[str, Any]
    skipped: bool  # True: the output was already up to date


def prepare(
    cfg: DataConfig, *, progress: bool = True, log: Callable[[str], None] = print
) -> PrepareResult:
    """Write `cfg.out_dir/<tier>/<split>.parquet` and `manifest.json` (see module docstring)."""
    try:
        check_config(cfg)
    except ValueError as exc:
        raise DataError(str(exc)) from exc
    source = resolve_source(cfg.source, cfg.format, read_options(cfg))
    columns = list(REQUIRED_COLUMNS) + (list(VALIDATION_COLUMNS) if cfg.validate else [])
    if cfg.checkers.enabled():
        wanted = ["solutions", "incorrect_solutions", cfg.checkers.column or ""]
        columns += [c for c in wanted if c and c not in columns]
    source.check_columns(columns)
    out = Path(cfg.out_dir).expanduser().resolve()
    config_values, digest = config_digest(cfg)

    if not cfg.force and (manifest := up_to_date(out, source, digest, cfg)) is not None:
        log(f"{out} is up to date with the source and config (pass data.force=true to rebuild).")
        return PrepareResult(out, manifest, skipped=True)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not is_codefu_output(out))):
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


def _out_split(cfg: DataConfig, raw: str, origin: str) -> str:
    if raw not in cfg.split_map:
        raise DataError(
            f"{origin}: raw split {raw!r} has no entry in data.split_map {dict(cfg.split_map)}."
        )
    return cfg.split_map[raw]


def _scan_duplicates(
    cfg: DataConfig, source: Source, progress: bool
) -> tuple[DuplicateIndex, dict[str, Any]]:
    """Pass 1: duplicates, from names and statements only, and the problems the date window
    selects (the manifest's `date_window`); a window that selects none is a DataError."""
    dupes = DuplicateIndex(cfg.heldout_split)
    ordinals: dict[str, int] = defaultdict(int)
    window = date_window(cfg)
    windowed = window != (None, None)
    seen: Counter[str] = Counter()
    columns = ["name", "description", *(["contest_date"] if windowed else [])]
    bar = tqdm(
        total=source.num_rows(), desc="scan for duplicates", unit="problem", disable=not progress
    )
    for batch in source.iter_batches(columns, cfg.batch_size):
        split = _out_split(cfg, batch.split, batch.origin)
        names = batch.table.column("name").to_pylist()
        descs = batch.table.column("description").to_pylist()
        for name, desc in zip(names, descs, strict=True):
            dupes.add(split, ordinals[split], name, desc)
            ordinals[split] += 1
        if windowed:
            for date in batch.table.column("contest_date").to_pylist():
                seen[window_reason(date, window) or "selected"] += 1
        bar.update(batch.table.num_rows)
    bar.close()
    if not any(ordinals.values()):
        raise DataError(f"{source.description} holds no problem (no row): name one that has some.")
    summary = {
        "from": cfg.date_from,
        "to": cfg.date_to,
        "selected": seen["selected"] if windowed else None,
        "outside": seen[OUTSIDE_DATE_WINDOW],
        "undated": seen[NO_CONTEST_DATE],
    }
    if windowed and not seen["selected"]:
        raise DataError(
            f"the date window data.date_from={cfg.date_from} data.date_to={cfg.date_to} "
            f"selects no problem of {source.description} ({seen[OUTSIDE_DATE_WINDOW]} outside "
            f"it, {seen[NO_CONTEST_DATE]} without a contest date): widen or unset it."
        )
    return dupes, summary


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
    dupes, window = _scan_duplicates(cfg, source, progress)
    # Pass 2: filter, tier, validate, write.
    writers = {
        (t, s): TierWriter(tmp / t / f"{s}.parquet")
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
            process_batch(
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
        "date_window": window,
        **output_counts(writers, counts, read_by_split),
        **stats.as_dict(),
        "validation": validator.stats.as_dict() if validator else None,
    }


__all__ = [
    "ALL_PRIVATE_TESTS_TRUNCATED",
    "MANIFEST",
    "MANIFEST_FORMAT",
    "RULE_NAMES",
    "SEVERAL_VALID_ANSWERS",
    "STAMP",
    "UNTIERED",
    "PrepareResult",
    "PrepareStats",
    "config_digest",
    "judged_against_one_answer",
    "output_splits",
    "prepare",
    "rule_names",
]
