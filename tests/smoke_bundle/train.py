"""`codefu-train` as tests/test_bundle.py runs it from an unpacked smoke archive.

`python train.py MANIFEST CODEFU-TRAIN-ARGS...`: runs codefu-train's CLI. Where its start-up
check would refuse only because distributions the archive leaves out as never imported on
the smoke's path are missing (trl, mlflow, matplotlib: the check asks for the trainer's whole
`train` extra), the check is skipped and says so; any other refusal stands.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from codefu_trainer.run import stack
from codefu_trainer.training import cli


def main(argv: list[str]) -> int:
    unused = set(json.loads(Path(argv[0]).read_text())["unused"])
    missing = set(getattr(stack, "missing_training_stack", list)())
    if missing and missing <= unused and hasattr(cli, "require_training_stack"):
        print(f"smoke_bundle: start-up check skipped (missing only {sorted(missing)})", flush=True)
        cli.require_training_stack = lambda session: None  # type: ignore[assignment]
    return cli.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
