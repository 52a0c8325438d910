"""`codefu-data prepare`: Hydra-configured preparation with progress bars and a summary table."""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codefu_data.checkers import verdict_table
from codefu_data.compose import ComposeError, compose_config, did_you_mean
from codefu_data.config import (
    DataConfig,
    PromptConfig,
    builtin_config_dir,
    data_config_from_dict,
    register_configs,
)
from codefu_data.reader import DataError
from codefu_data.validate import language_table

EPILOG = """\
Hydra overrides (after the options) change the config in conf/prepare.yaml, e.g.
  data=hard                      training tier (prepare always writes every tier)
  data.source=DIR                or --source; "sample" = the shipped raw dataset
  data.source=[a.jsonl,dir/]     several sources, of any formats (data.format=auto detects each)
  data.date_from=2024-08-01      a contest-date window (data.date_to too)
  data.validate=true             check tests with the accepted C++ solutions (codefu-sandbox)
  data.tiers.hard.max_rating=2400
A key of the data config may drop its `data.` prefix: validate=true, source=DIR.

Output: OUT/<tier>/{train,test}.parquet + OUT/manifest.json. Raw splits map
train→train and valid+test→test (data.split_map); duplicates across splits stay only in test.
"""


def valid_keys() -> list[str]:
    """Every `data.*` key of the schema, for error messages."""
    keys: list[str] = []

    def walk(prefix: str, cls: type) -> None:
        for f in dataclasses.fields(cls):
            if f.name == "prompt":
                walk(f"{prefix}prompt.", PromptConfig)
            elif f.name == "tiers":
                keys.append(f"{prefix}tiers.<tier>.min_rating")
                keys.append(f"{prefix}tiers.<tier>.max_rating")
            else:
                keys.append(prefix + f.name)

    walk("data.", DataConfig)
    return keys


def _with_prefix(override: str) -> str:
    """`validate=true` → `data.validate=true` for keys of the data config."""
    lead = len(override) - len(override.lstrip("+~"))
    key = override[lead:].split("=", 1)[0]
    top = key.split(".", 1)[0]
    fields = {f.name for f in dataclasses.fields(DataConfig)}
    if top in fields and top != "data":
        return override[:lead] + "data." + override[lead:]
    return override


def check_overrides(overrides: Sequence[str], options: Sequence[str]) -> None:
    """Each override is KEY=VALUE with a key of the data config (or `data=OPTION`): else a
    DataError naming it, the closest valid keys and what is valid."""
    keys = valid_keys()
    valid = f"Valid keys: {', '.join(keys)}. Options for data=: {', '.join(options)}."
    for text in overrides:
        body = _with_prefix(text).lstrip("+~")
        key, equals, value = body.partition("=")
        if not equals and not text.startswith("~"):
            raise DataError(
                f"cannot read override {text!r}: write KEY=VALUE, e.g. data=hard or "
                f"data.validate=true. {valid}"
            )
        if key == "data":
            if value not in options:
                raise DataError(
                    f"{text}: {value!r} is not an option of data{did_you_mean(value, options)}. "
                    f"{valid}"
                )
            continue
        if text.startswith("+") or key.startswith("hydra."):
            continue  # adds a key, or Hydra's own: Hydra judges it
        pattern = re.sub(r"^(data\.tiers)\.[^.]+\.", r"\1.<tier>.", key)
        if not pattern.startswith("data."):
            pattern = "data." + pattern
        if pattern not in keys and not any(pattern.startswith(k + ".") for k in keys):
            raise DataError(
                f"{text}: {key!r} is not a key of the data config{did_you_mean(pattern, keys)}. "
                f"{valid}"
            )


def load_data_config(config_dir: str | None, overrides: Sequence[str]) -> DataConfig:
    """Compose conf/prepare.yaml (or the built-in copy) with overrides into a DataConfig."""
    from omegaconf import OmegaConf

    register_configs()
    directory = Path(config_dir).resolve() if config_dir else builtin_config_dir()
    if not (directory / "prepare.yaml").is_file():
        raise DataError(
            f"{directory}: no prepare.yaml; pass the repository's conf/ directory as --config-dir."
        )
    options = sorted(p.stem for p in (directory / "data").glob("*.yaml"))
    check_overrides(overrides, options)
    try:
        cfg = compose_config(directory, "prepare", [_with_prefix(o) for o in overrides])
    except ComposeError as exc:
        message = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        raise DataError(
            f"invalid override(s) {' '.join(overrides)}: {message}. Valid keys: "
            f"{', '.join(valid_keys())}. Options for data=: {', '.join(options)}."
        ) from exc
    values = OmegaConf.to_container(cfg.data, resolve=True)
    assert isinstance(values, dict)
    try:
        return data_config_from_dict({str(k): v for k, v in values.items()})
    except ValueError as exc:
        raise DataError(str(exc)) from exc


def summary_table(manifest: dict[str, Any]) -> str:
    """A plain-text table of kept and dropped problems per tier and split."""
    counts = manifest["counts"]
    splits = sorted({s for by_split in counts.values() for s in by_split})
    reasons = sorted(
        {r for by_split in counts.values() for c in by_split.values() for r in c["dropped"]}
    )
    header = ["tier", "split", "kept", *reasons]
    rows = []
    for tier in sorted(counts):
        for split in splits:
            c = counts[tier].get(split, {"kept": 0, "dropped": {}})
            rows.append(
                [tier, split, str(c["kept"]), *(str(c["dropped"].get(r, 0)) for r in reasons)]
            )
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    totals = manifest["totals"]
    lines.append(
        f"read {totals['read']} problems, kept {totals['kept']}, "
        f"dropped {sum(totals['dropped'].values())}"
    )
    rules = manifest.get("judging_rules")
    if rules:
        lines.append(
            "judging rules (found / kept): "
            + ", ".join(f"{name} {c['found']}/{c['kept']}" for name, c in rules.items())
        )
    window = manifest.get("date_window") or {}
    if window.get("selected") is not None:
        lines.append(
            f"date window {window['from'] or '…'} to {window['to'] or '…'}: "
            f"{window['selected']} problems in it, {window['outside']} outside, "
            f"{window['undated']} without a date"
        )
    unvalidated = manifest.get("unvalidated") or {}
    if unvalidated:
        by_source = ", ".join(f"{name} {n}" for name, n in unvalidated.items())
        lines.append(
            f"kept unvalidated (no known program checked their tests): "
            f"{sum(unvalidated.values())} ({by_source})"
        )
    truncated = (manifest.get("tests_dropped") or {}).get("truncated_output", 0)
    if truncated:
        lines.append(f"tests dropped for a truncated expected output: {truncated}")
    if manifest.get("checkers"):
        kept = manifest.get("several_answers_kept_with_checker", 0)
        lines.append(f"several-answer problems kept with a checker program: {kept}")
        lines.append("checker programs (validated on every kept test):")
        lines.append(verdict_table(manifest["checkers"]))
    if manifest.get("validation"):
        v = manifest["validation"]
        totals = {k: n for k, n in sorted(v.items()) if k != "languages"}
        lines.append("validation: " + ", ".join(f"{k}={n}" for k, n in totals.items()))
        if v.get("languages"):
            lines.append(
                "accepted solutions per language (kept / dropped: what they alone decide; "
                "a problem is decided on all of them):"
            )
            lines.append(language_table(v))
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codefu-data",
        description=(
            "CodeContests, LiveCodeBench, TACO/APPS, PrimeIntellect and DeepCoder problems → "
            "quality-filtered difficulty tiers in veRL parquet format."
        ),
    )
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser(
        "prepare",
        help="filter, tier and write the processed dataset",
        description="Prepare OUT/<tier>/{train,test}.parquet and OUT/manifest.json.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    prep.add_argument(
        "--config-dir", help="directory holding prepare.yaml (default: built-in defaults)"
    )
    prep.add_argument(
        "--source",
        help="raw dataset: dir of parquet/JSONL files, .parquet/.jsonl file, hub id, or 'sample'",
    )
    prep.add_argument(
        "--out", help="output directory (default: data/processed in the current directory)"
    )
    prep.add_argument("--no-progress", action="store_true", help="hide progress bars")
    prep.add_argument(
        "overrides", nargs="*", help="Hydra overrides, e.g. data=hard data.validate=true"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from codefu_data.prepare import prepare

    overrides = list(args.overrides)
    if args.source:
        overrides.append(f"data.source={args.source}")
    if args.out:
        overrides.append(f"data.out_dir={args.out}")
    try:
        cfg = load_data_config(args.config_dir, overrides)
        result = prepare(
            cfg, progress=not args.no_progress, log=lambda m: print(m, file=sys.stderr)
        )
    except DataError as exc:
        print(f"codefu-data: error: {exc}", file=sys.stderr)
        return 2
    state = "up to date" if result.skipped else "written"
    print(f"\n{result.out_dir} ({state}; training tier: {cfg.tier})")
    print(summary_table(result.manifest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
