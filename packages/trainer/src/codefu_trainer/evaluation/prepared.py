"""The prepared dataset an evaluation reads, and the contest-date window its manifest records.

Without `eval.prepare` it is `data.out_dir`, as `nox -s prepare` wrote it. With it (the
`livecodebench` protocol sets it) it is what `data.source` names: a folder already prepared
(it holds a manifest.json) is read as it is; anything else (a LiveCodeBench file or folder,
any source `codefu-data prepare` reads) is prepared by codefu-data with the composed data
settings into `<eval.root_dir>/eval/data/<source>_<digest of those settings>/`, which the
next evaluation of the same source and settings reuses (prepare's own up-to-date check).
With `eval.release`, data.source's files are first narrowed to those the LiveCodeBench
release reads (`livecodebench.release_files`), and the folder is named after the release.
A prepared folder whose prompts are of another style than the evaluation asks for
(`data.prompt.style`, as `eval.lcb_style` sets it) is refused.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codefu_trainer.evaluation.config import EvalConfig
from codefu_trainer.evaluation.livecodebench import release_files
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
        check_prompt_style(Path(cfg.data.out_dir).expanduser(), cfg.data.prompt.style)
        return cfg
    from codefu_data.manifest import config_digest
    from codefu_data.prepare import prepare
    from codefu_data.reader import DataError

    source = cfg.data.source
    out = prepared_folder(source)
    if out is not None:
        if cfg.eval.release is not None:
            raise BadInputError(
                f"eval.release={cfg.eval.release} selects LiveCodeBench's files, but "
                f"data.source={source} is a prepared dataset: pass the LiveCodeBench files "
                "(or their folder) as data.source."
            )
        check_prompt_style(out, cfg.data.prompt.style)
        log(f"codefu-eval: data.source={source} is a prepared dataset: evaluating it as it is")
    else:
        label = _label(source)
        if cfg.eval.release is not None:
            source, label = _release_source(cfg.eval.release, source), cfg.eval.release
        data = dataclasses.replace(cfg.data, source=source)
        _, digest = config_digest(data)
        root = Path(cfg.eval.root_dir).expanduser().resolve()
        out = root / "eval" / "data" / f"{label}_{digest[:8]}"
        data = dataclasses.replace(data, out_dir=str(out))
        try:
            result = prepare(data, progress=False, log=lambda line: log(f"codefu-eval: {line}"))
        except DataError as exc:
            raise BadInputError(f"data.source={source}: {exc}") from None
        if not result.skipped:
            kept = result.manifest.get("totals", {}).get("kept")
            log(f"codefu-eval: prepared data.source={source} into {out} ({kept} problems kept)")
    data = dataclasses.replace(cfg.data, source=source, out_dir=str(out))
    return dataclasses.replace(cfg, data=data)


def _release_source(release: str, source: Any) -> list[str]:
    """data.source narrowed to the files LiveCodeBench's `release` reads; BadInputError
    (exit 2) naming what is missing."""
    from codefu_data.reader import DataError, LocalSource, resolve_source

    try:
        found = resolve_source(source)
        if not isinstance(found, LocalSource):
            raise DataError("eval.release selects local files; download them and name them")
        return [str(p) for p in release_files(release, [f.path for f in found.files])]
    except (DataError, ValueError) as exc:
        raise BadInputError(f"data.source={source}: {exc}") from None


def release_record(cfg: EvalConfig) -> dict[str, Any] | None:
    """The LiveCodeBench release evaluated and its files, as `with_prepared_data` selected
    them into data.source (None without eval.release)."""
    if cfg.eval.release is None:
        return None
    sources = cfg.data.source if isinstance(cfg.data.source, list | tuple) else [cfg.data.source]
    return {"name": cfg.eval.release, "files": [Path(str(f)).name for f in sources]}


def manifest_config(out_dir: Path) -> dict[str, Any]:
    """The data settings a prepared folder's manifest records ({} without one)."""
    from codefu_data.prepare import MANIFEST

    try:
        config = json.loads((Path(out_dir).expanduser() / MANIFEST).read_text()).get("config")
    except (OSError, ValueError, AttributeError):
        return {}
    return dict(config) if isinstance(config, dict) else {}


def check_prompt_style(out_dir: Path, style: str) -> None:
    """The prepared folder's prompts are of `style` (data.prompt.style); BadInputError naming
    both and the fix when not."""
    from codefu_data.config import CODEFU_PROMPTS

    recorded = manifest_config(out_dir).get("prompt")
    prepared = recorded.get("style", CODEFU_PROMPTS) if isinstance(recorded, dict) else None
    if prepared is not None and prepared != style:
        raise BadInputError(
            f"{out_dir} holds prompts of style {prepared}, but this evaluation asks for {style} "
            "(data.prompt.style, set by eval.lcb_style): pass the LiveCodeBench file itself as "
            "data.source, so that it is prepared with these prompts."
        )


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
