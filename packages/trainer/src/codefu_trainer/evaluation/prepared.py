"""The prepared dataset an evaluation reads, and the contest-date window its manifest records.

Without `eval.prepare` it is `data.out_dir`, as `nox -s prepare` wrote it. With it (the
`livecodebench` protocol sets it) it is what `data.source` names: a folder already prepared
(it holds a manifest.json) is read as it is; anything else (a LiveCodeBench file or folder,
any source `codefu-data prepare` reads) is prepared by codefu-data with the composed data
settings into `<eval.root_dir>/eval/data/<source>_<digest of those settings>/`, which the
next evaluation of the same source and settings reuses (prepare's own up-to-date check).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codefu_trainer.evaluation.config import EvalConfig
from codefu_trainer.run.prepared_data import BadInputError

Log = Callable[[str], None]


def _label(source: Any) -> str:
    """A folder-name label of `data.source`: its file or folder name, or `sources`."""
    if isinstance(source, list | tuple):
        return "sources" if len(source) != 1 else _label(source[0])
    name = Path(str(source).rstrip("/")).name
    return re.sub(r"[^\w.-]+", "-", name).strip("-.") or "source"


def prepared_folder(source: Any) -> Path | None:
    """`data.source` when it names a folder `codefu-data prepare` wrote, else None."""
    from codefu_data.prepare import MANIFEST

    if not isinstance(source, str):
        return None
    folder = Path(source).expanduser()
    return folder.resolve() if (folder / MANIFEST).is_file() else None


def with_prepared_data(cfg: EvalConfig, log: Log = print) -> EvalConfig:
    """`cfg` with `data.out_dir` the prepared dataset to evaluate (see the module docstring).

    BadInputError (exit 2) when data.source cannot be prepared: no such file, a file of
    another format, a corrupt row, a refused pickle, a window that selects nothing."""
    if not cfg.eval.prepare:
        return cfg
    from codefu_data.manifest import config_digest
    from codefu_data.prepare import prepare
    from codefu_data.reader import DataError

    source = cfg.data.source
    out = prepared_folder(source)
    if out is not None:
        log(f"codefu-eval: data.source={source} is a prepared dataset: evaluating it as it is")
    else:
        _, digest = config_digest(cfg.data)
        root = Path(cfg.eval.root_dir).expanduser().resolve()
        out = root / "eval" / "data" / f"{_label(source)}_{digest[:8]}"
        data = dataclasses.replace(cfg.data, out_dir=str(out))
        try:
            result = prepare(data, progress=False, log=lambda line: log(f"codefu-eval: {line}"))
        except DataError as exc:
            raise BadInputError(f"data.source={source}: {exc}") from None
        if not result.skipped:
            kept = result.manifest.get("totals", {}).get("kept")
            log(f"codefu-eval: prepared data.source={source} into {out} ({kept} problems kept)")
    return dataclasses.replace(cfg, data=dataclasses.replace(cfg.data, out_dir=str(out)))


def date_window(out_dir: Path) -> dict[str, Any] | None:
    """The manifest's `date_window` of a prepared folder ({from, to, selected, outside,
    undated}); None without a manifest or a window in it."""
    from codefu_data.prepare import MANIFEST

    path = Path(out_dir).expanduser() / MANIFEST
    try:
        window = json.loads(path.read_text()).get("date_window")
    except (OSError, ValueError, AttributeError):
        return None
    return dict(window) if isinstance(window, dict) else None
