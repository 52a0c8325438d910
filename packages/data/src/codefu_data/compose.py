"""Hydra composition of a primary config, with errors that say what to fix.

The one place the project calls Hydra's compose API: `codefu-data prepare`, `codefu-train`
(both of its stages) and `codefu-reward` compose through `compose_config`. A mistyped key's
suggestions (`did_you_mean`) come from here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from omegaconf import DictConfig


class ComposeError(ValueError):
    """Hydra could not compose a configuration; the message says which key or option and
    what is valid (each command says it in its own words: codefu-data's exit 2, the
    trainer's `ConfigError`)."""


def dotted_keys(node: DictConfig, prefix: str = "") -> Iterator[str]:
    """Every key of `node` as a full dotted name (`trainer`, `trainer.total_epochs`, …)."""
    for key in node:
        name = f"{prefix}{key}"
        yield name
        child = node._get_node(key)
        if isinstance(child, DictConfig) and not child._is_missing() and not child._is_none():
            yield from dotted_keys(child, name + ".")


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: the fewest one-character inserts, deletes and substitutions."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _abbreviates(short: str, name: str) -> bool:
    """`short` is `name` with letters left out (`totl_steps` of `total_training_steps`)."""
    rest = iter(name)
    return all(char in rest for char in short)


def closest_keys(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to `n` full dotted names from `candidates` closest to the dotted name `word`,
    nearest first: those at the smallest edit distance (or one more), at most a third of
    the word's length away, and the keys beside `word`'s last key that it abbreviates."""
    pool = list(dict.fromkeys(candidates))
    if not pool:
        return []
    distance = {c: edit_distance(word, c) for c in pool}
    best = min(distance.values())
    near = [c for c in pool if distance[c] <= min(max(2, len(word) // 3), best + 1)]
    parent, _, last = word.rpartition(".")
    abbreviated = [
        c
        for c in pool
        if len(last) >= 3
        and c.rpartition(".")[0] == parent
        and c.rpartition(".")[2][:1] == last[:1]
        and _abbreviates(last, c.rpartition(".")[2])
    ]
    found = dict.fromkeys([*near, *abbreviated])
    return sorted(found, key=lambda c: (distance[c], c))[:n]


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """` (did you mean 'a' or 'b'?)` from `closest_keys`, or "" when nothing is close."""
    found = [repr(c) for c in closest_keys(word, candidates)]
    if not found:
        return ""
    listed = found[0] if len(found) == 1 else f"{', '.join(found[:-1])} or {found[-1]}"
    return f" (did you mean {listed}?)"


def compose_config(conf_dir: Path, config_name: str | None, overrides: Sequence[str]) -> DictConfig:
    """Compose `<conf_dir>/<config_name>.yaml` (None: no primary config, only groups the
    overrides add) with Hydra overrides.

    Raises ComposeError when the file is missing or Hydra/OmegaConf reject an override (the
    message keeps Hydra's, which names the key, plus its cause).
    """
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    directory = conf_dir.expanduser().resolve()
    if config_name is not None and not (directory / f"{config_name}.yaml").is_file():
        raise ComposeError(
            f"No {config_name}.yaml in {directory}: pass --config-dir pointing at the "
            "repository's conf/ directory."
        )
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(str(directory), version_base=None):
            return compose(config_name=config_name, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as exc:
        cause = f" ({exc.__cause__})" if exc.__cause__ else ""
        raise ComposeError(f"{exc}{cause}") from exc
