"""``codefu-reward score``: score a responses file against a processed dataset.

    codefu-reward score --data PROCESSED.parquet --responses RESPONSES.jsonl --out SCORES.jsonl \
        [--workers N] [--address ADDR] [--config-dir conf] [--reward codefu] [KEY=VALUE ...]

A responses line: ``{"name": <problem name>, "response": <text>}`` (optionally ``"id"``).
A scores line: the same id/name plus the reward keys (score, verdict, passed, total,
compile_seconds, run_seconds, judge_failure, has_code, language) and the judging
node/attempts. The summary counts verdicts per language of the answers' code (``LANGUAGE``:
a language the run does not accept, ``reward.languages``).
Trailing ``KEY=VALUE`` arguments override reward settings (``mode=power``,
``worker.acquire_timeout_seconds=60``; a key may keep its ``reward.`` prefix:
``reward.languages=[python]``). Without ``--address`` or ``RAY_ADDRESS`` the
responses are judged in local worker processes (same worker code, same verdicts, no Ray
start-up); with one, on that Ray cluster's judge pool. Exit status: 0 scored, 2 bad usage
or input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codefu_trainer.reward.config import RewardConfig, reward_config_from

__all__ = ["InputError", "load_ground_truths", "load_responses", "main"]


class InputError(Exception):
    """Bad input: the message names the file (and line) and what to fix."""


def load_ground_truths(path: Path) -> dict[str, Any]:
    """Problem name → ground truth, from a processed parquet file."""
    import pyarrow.parquet as pq

    if not path.is_file():
        raise InputError(f"{path}: no such file (pass a processed .parquet via --data)")
    try:
        table = pq.read_table(path, columns=["reward_model"])
    except Exception as e:
        raise InputError(
            f"{path}: not a processed dataset parquet with a reward_model column ({e})"
        ) from e
    truths: dict[str, Any] = {}
    for row, rm in enumerate(table.column("reward_model").to_pylist()):
        gt = (rm or {}).get("ground_truth")
        if not isinstance(gt, dict) or not gt.get("name"):
            raise InputError(f"{path}: row {row} has no reward_model.ground_truth.name")
        truths.setdefault(str(gt["name"]), gt)
    return truths


def load_responses(path: Path, known: dict[str, Any]) -> list[dict[str, Any]]:
    """Parse a responses JSONL file, checking each line names a known problem."""
    if not path.is_file():
        raise InputError(f"{path}: no such file (pass a JSONL file via --responses)")
    rows: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a readable UTF-8 JSONL file ({exc})") from None
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{lineno}: not valid JSON ({e.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise InputError(f'{path}:{lineno}: expected an object with a "name" string')
        if not isinstance(row.get("response"), str):
            raise InputError(f'{path}:{lineno}: expected a "response" string')
        if row["name"] not in known:
            sample = ", ".join(repr(n) for n in list(known)[:3])
            raise InputError(
                f"{path}:{lineno}: unknown problem {row['name']!r}: not in the --data file "
                f"({len(known)} problems, e.g. {sample})"
            )
        rows.append(row)
    return rows


def load_config(config_dir: str | None, reward: str, overrides: Sequence[str]) -> RewardConfig:
    """RewardConfig from ``<config_dir>/reward/<reward>.yaml`` (Hydra) plus overrides; without
    a config directory, the built-in defaults (``--reward codefu`` only)."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from codefu_data.compose import ComposeError, compose_config, did_you_mean, dotted_keys

    for item in overrides:
        if "=" not in item:
            raise InputError(f"override {item!r} is not KEY=VALUE (e.g. mode=power)")
    overrides = [_unprefixed(item) for item in overrides]
    directory = Path(config_dir) if config_dir else Path("conf")
    found = (directory / "reward" / f"{reward}.yaml").is_file()
    if not found and (config_dir is not None or reward != "codefu"):
        raise InputError(
            f"{directory}/reward/{reward}.yaml not found (check --config-dir/--reward; "
            "without ./conf only the built-in --reward codefu is known)"
        )
    keys = list(dotted_keys(OmegaConf.structured(RewardConfig)))
    for item in overrides:
        key = item.split("=", 1)[0].lstrip("+~")
        if key not in keys:
            raise InputError(
                f"{item}: {key!r} is not a reward setting{did_you_mean(key, keys)}; the "
                f"settings: {', '.join(k for k in keys if '.' not in k)} (and their sub-keys)"
            )
    try:
        if found:
            cfg = compose_config(
                directory, None, [f"+reward={reward}", *(f"reward.{o}" for o in overrides)]
            )
            return reward_config_from(cfg.reward)
        base = OmegaConf.structured(RewardConfig)
        return reward_config_from(OmegaConf.merge(base, OmegaConf.from_dotlist(list(overrides))))
    except (ComposeError, OmegaConfBaseException, ValueError) as exc:
        message = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        raise InputError(f"reward settings {' '.join(overrides)}: {message}") from None


def _unprefixed(item: str) -> str:
    """An override without the `reward.` its key has in training's configuration
    (`reward.languages=[python]` is `languages=[python]`)."""
    marks = item[: len(item) - len(item.lstrip("+~"))]
    return marks + item[len(marks) :].removeprefix("reward.")


def check_out(path: Path) -> None:
    """`--out` can be written: not a directory, under a writable directory (checked before any
    judging, and nothing is created)."""
    if path.is_dir():
        raise InputError(f"--out {path} is a directory: give a file path such as scores.jsonl")
    parent = next((p for p in path.absolute().parents if p.exists()), Path("/"))
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise InputError(f"--out {path}: {parent} is not a writable directory")


def _summary(verdicts: Counter[tuple[str, str]], n: int, wall: float, failures: int) -> str:
    """The console table: verdict counts per language (``-``: no code), then totals."""
    lines = ["", f"{'verdict':<12}{'language':<10}{'count':>8}{'share':>9}", "-" * 39]
    for (verdict, language), count in verdicts.most_common():
        lines.append(f"{verdict:<12}{language or '-':<10}{count:>8}{count / max(n, 1):>9.1%}")
    lines += [
        "-" * 39,
        f"{'responses':<12}{n:>8}",
        f"{'judge fails':<12}{failures:>8}",
        f"{'wall s':<12}{wall:>8.2f}",
        f"{'responses/s':<12}{n / wall if wall > 0 else 0.0:>8.2f}",
    ]
    return "\n".join(lines)


def score_command(args: argparse.Namespace) -> int:
    config = load_config(args.config_dir, args.reward, args.overrides)
    if args.workers is not None:
        if args.workers < 1:
            raise InputError("--workers must be >= 1")
        config.worker.num_workers = args.workers
    check_out(Path(args.out))
    truths = load_ground_truths(Path(args.data))
    rows = load_responses(Path(args.responses), truths)

    from codefu_trainer.reward.service import RewardService

    address = args.address or os.environ.get("RAY_ADDRESS") or None
    if address is None:
        # No cluster named: judge in local worker processes (no Ray start-up).
        service = RewardService(config, local=True)
    else:
        import ray

        ray.init(address=address, log_to_driver=False, configure_logging=False)
        service = RewardService(config)
    try:
        start = time.perf_counter()
        scored = service.score_detailed(
            [r["response"] for r in rows], [truths[r["name"]] for r in rows]
        )
        wall = time.perf_counter() - start
    finally:
        service.close()
        if address is not None:
            import ray

            ray.shutdown()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    verdicts: Counter[tuple[str, str]] = Counter()
    failures = 0
    with out.open("w", encoding="utf-8") as f:
        for row, s in zip(rows, scored, strict=True):
            record: dict[str, Any] = {"id": row["id"]} if "id" in row else {}
            record["name"] = row["name"]
            record.update(s.result.to_dict())
            record["node_id"] = s.outcome.node_id if s.outcome else ""
            record["attempts"] = s.outcome.attempts if s.outcome else 0
            f.write(json.dumps(record) + "\n")
            verdicts[s.result.verdict, s.result.language] += 1
            failures += s.result.judge_failure
    print(_summary(verdicts, len(rows), wall, failures))
    print(f"scores written to {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="codefu-reward", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("score", help="score a responses JSONL file against a processed parquet")
    p.add_argument("--data", required=True, help="processed dataset parquet (codefu-data)")
    p.add_argument("--responses", required=True, help='JSONL: {"name", "response", "id"?} per line')
    p.add_argument("--out", required=True, help="where to write the scores JSONL")
    p.add_argument("--workers", type=int, default=None, help="judge workers (default: one per CPU)")
    p.add_argument(
        "--address",
        default=None,
        help="Ray cluster to judge on (default: $RAY_ADDRESS; without either, local worker "
        "processes judge, with no Ray start-up)",
    )
    p.add_argument(
        "--config-dir", default=None, help="config dir holding reward/*.yaml (default ./conf)"
    )
    p.add_argument("--reward", default="codefu", help="reward option: codefu, power, ...")
    p.add_argument("overrides", nargs="*", help="reward settings KEY=VALUE, e.g. mode=power")
    p.set_defaults(func=score_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except InputError as e:
        print(f"codefu-reward: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
