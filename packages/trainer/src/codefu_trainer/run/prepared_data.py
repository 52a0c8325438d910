"""The prepared dataset a run reads: its parquet files open and are this version's layout.

Checked before a run directory is made, so a corrupt, truncated or outdated dataset stops
`codefu-train` with one line naming the file and the fix (exit 2), not with a traceback
after the run has started. Only each file's footer and schema are read: damage inside a
row group with an intact footer still shows when the rows are read.
"""

from __future__ import annotations

import json
from pathlib import Path

from codefu_sandbox.languages import DEFAULT_LANGUAGE
from codefu_trainer.run.config import TrainConfig, data_files

# Columns every consumer reads (veRL's dataset and reward hook, the rehearsal's prompts).
REQUIRED_COLUMNS = ("data_source", "prompt", "reward_model")


class BadInputError(ValueError):
    """An input file cannot be used as it is; the message names the file and the fix."""


def _reprepare(out_dir: Path) -> str:
    return (
        f"prepare it again: `nox -s prepare -- data.out_dir={out_dir} data.force=true`, or point "
        "data.out_dir at a dataset prepared by this version"
    )


def check_manifest(out_dir: Path, language: str | None = None) -> None:
    """A prepared directory's manifest.json, when it has one, is of this version's format,
    and its prompts ask for `language` (`data.language`) when one is given."""
    from codefu_data.prepare import MANIFEST, MANIFEST_FORMAT

    path = out_dir / MANIFEST
    if not path.is_file():
        return  # a dataset prepared elsewhere (the reference parquet) has no manifest
    try:
        manifest = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInputError(
            f"{path}: not a readable manifest ({exc}); {_reprepare(out_dir)}."
        ) from None
    found = manifest.get("format") if isinstance(manifest, dict) else None
    if found != MANIFEST_FORMAT:
        version = manifest.get("codefu_data_version", "?") if isinstance(manifest, dict) else "?"
        raise BadInputError(
            f"{path}: prepared by codefu-data {version} in format {found!r}; this version reads "
            f"format {MANIFEST_FORMAT}: {_reprepare(out_dir)}."
        )
    config = manifest.get("config")
    prepared = (
        config.get("language", DEFAULT_LANGUAGE) if isinstance(config, dict) else DEFAULT_LANGUAGE
    )
    if language is not None and prepared != language:
        raise BadInputError(
            f"{path}: its prompts ask for {prepared} (prepared with data.language={prepared}), "
            f"but data.language={language}: prepare the data for {language} into another "
            f"folder (`nox -s prepare -- data.language={language} data.out_dir=DIR`, then "
            f"data.out_dir=DIR here), or set data.language={prepared}."
        )


def check_parquet(path: Path, out_dir: Path) -> None:
    """`path` is a parquet file (its footer reads) with the columns a run reads."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except (pa.ArrowException, OSError) as exc:
        raise BadInputError(
            f"{path}: not a readable parquet file ({exc}); {_reprepare(out_dir)}."
        ) from None
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise BadInputError(
            f"{path}: has no column {', '.join(missing)} (not a dataset `codefu-data prepare` "
            f"writes); {_reprepare(out_dir)}."
        )


def check_prepared_data(cfg: TrainConfig) -> None:
    """The configured tier's train/test parquet and the manifest beside them can be read,
    and the prompts ask for the configured language.

    Files that are absent, or on S3, are left to `compose.require_data` and the job.
    """
    train, test = data_files(cfg)
    if str(train).startswith("s3:"):
        return
    out_dir = train.parent.parent
    present = [p for p in (train, test) if p.is_file()]
    if present:
        check_manifest(out_dir, cfg.data.language)
        check_chat_prompts(out_dir)
    for path in present:
        check_parquet(path, out_dir)


def check_chat_prompts(out_dir: Path) -> None:
    """The prepared prompts are chat messages (training renders them with the model's chat
    template), not LiveCodeBench's text prompts, which only an evaluation renders."""
    from codefu_data.livecodebench_prompts import TEXT_STYLES
    from codefu_data.prepare import MANIFEST

    try:
        config = json.loads((out_dir / MANIFEST).read_text()).get("config")
        style = config["prompt"]["style"]
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return  # no manifest, or one from before prompt styles: chat messages
    if style in TEXT_STYLES:
        raise BadInputError(
            f"{out_dir}: its prompts are LiveCodeBench's {style} texts, which a chat template "
            f"cannot render: training takes chat prompts; {_reprepare(out_dir)} "
            "(data.prompt.style=codefu, or livecodebench)."
        )


def check_raw_source(source: str) -> None:
    """The raw dataset `data.source` names (the rehearsal's warm start reads its C++
    programs) resolves and has the columns holding them: a missing path, an unknown hub id
    or a file without solutions stops here, before anything is composed or written."""
    from codefu_data.reader import DataError, resolve_source
    from codefu_data.solutions import SOLUTION_COLUMNS

    try:
        resolve_source(source).check_columns(SOLUTION_COLUMNS)
    except DataError as exc:
        raise BadInputError(f"data.source={source}: {exc}") from None
