"""`codefu-train --smoke` (docs/smoke.md): its entry point `run.py`, the stages (`stages.py`)
and the table (`table.py`); each phase is measured inside veRL's trainer process by
`training/phase_probe.py`."""
