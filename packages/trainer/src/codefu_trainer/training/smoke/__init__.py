"""`codefu-train --smoke` (docs/smoke.md): its entry point `run.py`, the stages (`stages.py`),
the table (`table.py`) and the probe that measures each phase inside veRL's trainer process
(`probe.py`)."""
