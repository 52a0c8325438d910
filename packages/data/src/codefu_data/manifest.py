"""What a prepared dataset records about itself: manifest.json (`MANIFEST_FORMAT`), the stamp
that lets an unchanged rerun return at once (input sizes/mtimes + config digest), and the
counts and statistics the manifest holds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codefu_data import __version__
from codefu_data.config import DataConfig
from codefu_data.reader import Source
from codefu_data.tier_writer import TierWriter
from codefu_sandbox.languages import for_suffix
from codefu_sandbox.rules import JudgingRules

MANIFEST = "manifest.json"
# The layout of manifest.json and the processed parquet: raised when either changes, so a
# trainer can tell a dataset prepared by another version (codefu_trainer.run.prepared_data).
# 2: the ground truth's `grader`; data_source per problem. 3: extra_info's difficulty,
# platform and contest date. 4: the grader's parameters as their JSON text (as the grader
# defines them), the drop reason `grader_language`.
MANIFEST_FORMAT = 4
STAMP = ".prepare-stamp.json"
RULE_NAMES = ("any_case", "tolerance", "several_answers", "any_order")
Counts = dict[str, dict[str, dict[str, int]]]  # tier → split → reason (or "kept") → n


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


@dataclass
class PrepareStats:
    """Manifest counts beside kept/dropped per reason: the judging rules found among the
    problems that passed every other filter and kept in the output, the tests dropped for a
    truncated expected output, and the problems written unvalidated, per data source."""

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
    # data source → problems written whose tests no known program checked (no solution,
    # data.validate=false, or a grader validation does not run)
    unvalidated: Counter[str] = dataclasses.field(default_factory=Counter)

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
            "unvalidated": dict(sorted(self.unvalidated.items())),
        }


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
    """sha256 of the checker folder's sources (files with a judge language's suffix: .cpp,
    .py; names and contents) and testlib.h: editing a checker makes the output out of date."""
    h = hashlib.sha256()
    paths: list[Path] = []
    if cfg.checkers.folder:
        folder = Path(cfg.checkers.folder).expanduser()
        paths += sorted(p for p in folder.iterdir() if for_suffix(p.suffix) is not None)
    if cfg.checkers.testlib:
        paths.append(Path(cfg.checkers.testlib).expanduser())
    for path in paths:
        h.update(path.name.encode() + b"\0" + file_sha256(path).encode() + b"\0")
    return h.hexdigest()


def output_splits(cfg: DataConfig) -> list[str]:
    return sorted(set(cfg.split_map.values()))


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def is_codefu_output(out: Path) -> bool:
    return (out / MANIFEST).is_file()


def up_to_date(out: Path, source: Source, digest: str, cfg: DataConfig) -> dict[str, Any] | None:
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
    if manifest.get("format") != MANIFEST_FORMAT:  # written in another layout: rewrite it
        return None
    for tier in cfg.tiers:
        for split in output_splits(cfg):
            if not (out / tier / f"{split}.parquet").is_file():
                return None
    return manifest


def output_counts(
    writers: dict[tuple[str, str], TierWriter], counts: Counts, read_by_split: dict[str, int]
) -> dict[str, Any]:
    """The manifest's outputs (files, rows, digests), counts per tier and split, totals."""
    outputs: dict[str, dict[str, Any]] = {}
    for (tier, split), w in sorted(writers.items()):
        outputs.setdefault(tier, {})[split] = {
            "file": f"{tier}/{split}.parquet",
            "rows": w.rows,
            "sha256": file_sha256(w.path),
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
