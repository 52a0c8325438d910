"""`prepare`'s second pass, one row group at a time: filter, tier and read the judging
rules of each problem, find its checker program, then clean the kept rows' tests, judge
them (`batch_checks`) and append their veRL rows to the tier's writer.

A problem whose source fixes how it is judged (a grader that compares values itself, not
the checker: `Grader.uses_checker`; or a comparison such as `livecodebench`) is judged as its
source judges it: the statement's "print any answer" does not drop it. A problem is kept
only when the prompts ask for a language its grader runs (`Grader.languages`; else reason
`grader_language`), and its prompt asks for what its grader calls, if anything
(`Grader.defines`). No grader is named here: each row's grader answers for itself.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from codefu_data.batch_checks import validate_checker_rows, validate_rows
from codefu_data.checkers import Checker, checker_config, checker_from_column, checker_from_folder
from codefu_data.clean_tests import drop_untestable, without_truncated_outputs
from codefu_data.config import DataConfig, date_window
from codefu_data.filters import DuplicateIndex, ProblemMeta, quality_reason, window_reason
from codefu_data.judging_rules import rules_from_statement
from codefu_data.manifest import Counts, PrepareStats
from codefu_data.prompts import build_messages
from codefu_data.reader import DataError
from codefu_data.tier_writer import TierWriter, build_rows
from codefu_data.tiers import assign_tier
from codefu_data.validate import Validator
from codefu_sandbox import GraderConfig, Judge, time_limit_seconds
from codefu_sandbox.graders import Grader
from codefu_sandbox.rules import JudgingRules

# Problems that passed the filters but no tier (counted in the manifest, never written).
UNTIERED = "untiered"
# Drop reason of the judging rules (docs/ARCHITECTURE.md, "Judging rules").
SEVERAL_VALID_ANSWERS = "several_valid_answers"
# Drop reason of a problem whose grader runs none of the languages `data.language` names.
GRADER_LANGUAGE = "grader_language"


def judged_against_one_answer(rules: JudgingRules) -> bool:
    """Several outputs are valid and the checker can only compare with the expected one
    (a free order alone is judged by `codecontests`' `any_order`)."""
    return rules.several_answers and not rules.any_order


def _tests_counts(col: pa.ChunkedArray) -> list[int]:
    """Number of tests per row; -1 when inputs and outputs differ in count; 0 when null."""
    arr = col.combine_chunks()
    n_in = pc.fill_null(pc.list_value_length(pc.struct_field(arr, "input")), 0).to_pylist()
    n_out = pc.fill_null(pc.list_value_length(pc.struct_field(arr, "output")), 0).to_pylist()
    return [a if a == b else -1 for a, b in zip(n_in, n_out, strict=True)]


def process_batch(
    cfg: DataConfig,
    *,
    table: pa.Table,
    split: str,
    dupes: DuplicateIndex,
    ordinals: dict[str, int],
    counts: Counts,
    stats: PrepareStats,
    writers: dict[tuple[str, str], TierWriter],
    validator: Validator | None,
    checker_judge: Judge | None = None,
) -> None:
    """Filter, tier, clean, judge and write one row group of split `split`, counting each
    problem under its tier and drop reason (or "kept") in `counts`."""
    names = table.column("name").to_pylist()
    descs = table.column("description").to_pylist()
    sources = table.column("source").to_pylist()
    ratings = table.column("cf_rating").to_pylist()
    times = table.column("time_limit").to_pylist()
    mems = table.column("memory_limit_bytes").to_pylist()
    labels = table.column("difficulty_label").to_pylist()
    dates = table.column("contest_date").to_pylist()
    graders = [_grader(stored) for stored in table.column("grader").to_pylist()]
    source_checkers = table.column("source_checker").to_pylist()
    n_public = _tests_counts(table.column("public_tests"))
    n_private = _tests_counts(table.column("private_tests"))
    window = date_window(cfg)

    data_sources = table.column("data_source").to_pylist()
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
        tier, tier_reason = assign_tier(meta.source, meta.cf_rating, cfg, labels[i])
        reason = (
            quality_reason(meta, cfg)
            or window_reason(dates[i], window)
            or dupes.reason(split, ordinal, meta.name, meta.description)
            or tier_reason
            or _grader_reason(cfg, graders[i])
        )
        if reason is None and tier is not None:
            rules[i] = rules_from_statement(descs[i])
            stats.found(rules[i])
            checker = _checker_of(cfg, table, i, names[i])
            if checker is not None:
                checkers[i] = checker
            elif (
                judged_against_one_answer(rules[i])
                and not cfg.keep_several_answers
                and not _judged_as_its_source_judges(graders[i], source_checkers[i])
            ):
                reason = SEVERAL_VALID_ANSWERS
        counts[tier or UNTIERED][split][reason or "kept"] += 1
        if reason is None and tier is not None:
            kept[tier].append(i)

    for tier in sorted(kept):
        rows = kept[tier]
        overrides = without_truncated_outputs(table, rows, stats)
        if overrides is not None:
            rows, overrides = drop_untestable(rows, overrides, counts[tier][split])
        validated: set[int] = set()
        if validator is not None:
            rows, overrides, validated = validate_rows(
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
            rows, overrides, checker_sources = validate_checker_rows(
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
            if i not in validated and i not in checker_sources:
                stats.unvalidated[data_sources[i]] += 1
        sub = table.take(pa.array(rows, pa.int64()))
        starters = table.column("starter_code").to_pylist()
        prompts = [
            build_messages(
                cfg.prompt,
                name=names[i],
                description=descs[i],
                time_limit_seconds=time_limit_seconds(times[i]) or 0.0,
                memory_bytes=mems[i],
                language=cfg.language,
                call=graders[i].defines(),
                starter_code=starters[i],
            )
            for i in rows
        ]
        w = writers[(tier, split)]
        w.append(
            build_rows(
                sub,
                prompts=prompts,
                rules=[rules[i] for i in rows],
                split=split,
                tier=tier,
                first_index=w.rows,
                tests_override=overrides,
                checkers=[
                    checker_config(checkers[i], checker_sources[i], cfg.checkers).to_dict()
                    if i in checker_sources
                    else source_checkers[i]
                    for i in rows
                ],
            )
        )


def _grader(stored: dict[str, Any] | None) -> Grader:
    """The grader of a row's `grader` column (null: the default grader)."""
    try:
        return GraderConfig.from_dict(stored).grader()
    except ValueError as exc:
        raise DataError(f"a problem's grader {stored!r}: {exc}") from exc


def _grader_reason(cfg: DataConfig, grader: Grader) -> str | None:
    """`grader_language` for a problem whose grader runs no program in the prompts'
    language (`data.language`)."""
    if grader.languages is not None and cfg.language not in grader.languages:
        return GRADER_LANGUAGE
    return None


def _judged_as_its_source_judges(grader: Grader, source_checker: dict[str, Any] | None) -> bool:
    """A problem whose grader compares values itself, or one its source compares
    (`livecodebench`): one expected answer is how its source judges it."""
    return not grader.uses_checker or source_checker is not None


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
