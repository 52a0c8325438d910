"""Ray's `worker_process_setup_hook` for veRL on CPU: runs first in every Ray worker process.

It selects veRL's CPU platform (VERL_PLATFORM=cpu) and installs the lazy patches
(`patches.install`), so every process veRL starts (TaskRunner, actor/reference workers,
agent-loop and reward workers, the rollout server, TransferQueue units) sees the same veRL.
Ray passes the hook to actors that set their own runtime_env too.
"""

from __future__ import annotations

import os

HOOK = "codefu_trainer.training.verl.cpu.hook.setup"


def setup() -> None:
    """Select the CPU platform and patch veRL as it is imported (cheap: imports no veRL)."""
    os.environ.setdefault("VERL_PLATFORM", "cpu")
    from codefu_trainer.training.verl.cpu import patches

    patches.install()
