"""Hydra composition of a primary config, with errors that say what to fix.

The one place the project calls Hydra's compose API: `codefu-data prepare`, `codefu-train`
(both of its stages) and `codefu-reward` compose through `compose_config`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig


class ConfigError(ValueError):
    """A configuration problem; the message says which key or option and what is valid."""


def compose_config(conf_dir: Path, config_name: str | None, overrides: Sequence[str]) -> DictConfig:
    """Compose `<conf_dir>/<config_name>.yaml` (None: no primary config, only groups the
    overrides add) with Hydra overrides.

    Raises ConfigError when the file is missing or Hydra/OmegaConf reject an override (the
    message keeps Hydra's, which names the key, plus its cause).
    """
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    directory = conf_dir.expanduser().resolve()
    if config_name is not None and not (directory / f"{config_name}.yaml").is_file():
        raise ConfigError(
            f"No {config_name}.yaml in {directory}: pass --config-dir pointing at the "
            "repository's conf/ directory."
        )
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(str(directory), version_base=None):
            return compose(config_name=config_name, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as exc:
        cause = f" ({exc.__cause__})" if exc.__cause__ else ""
        raise ConfigError(f"{exc}{cause}") from exc
