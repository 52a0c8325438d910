"""Ray's `worker_process_setup_hook` for veRL runs that use this package: runs first in every
Ray worker process.

It installs the lazy patches (`patches.install`), so every process veRL starts (TaskRunner,
actor/reference workers, agent-loop and reward workers, the rollout server, TransferQueue
units) sees the same veRL: the `hf` rollout's registrations, and the CPU platform's changes,
which act only where VERL_PLATFORM=cpu (set by the CPU path, `config.EXTENSION`) selects it.
On a GPU machine (`codefu-train --smoke` without vLLM) veRL keeps its CUDA platform.
Ray passes the hook to actors that set their own runtime_env too.
"""

from __future__ import annotations

HOOK = "codefu_trainer.training.verl.cpu.hook.setup"


def setup() -> None:
    """Patch veRL as it is imported (cheap: imports no veRL)."""
    from codefu_trainer.training.verl.cpu import patches

    patches.install()
