"""veRL's own trainer on a CPU-only machine (cluster=cpu_verl; docs/train.md "veRL on CPU").

platform.py (veRL's CPU platform), rollout.py (the `hf` rollout backend, CPU or GPU), patches.py
(every extension and patch veRL 0.9.1 needs, with the veRL lines they work around), hook.py
(Ray's worker setup hook that applies them), config.py (the veRL settings and run inputs),
run.py (a run with a Ray cluster of its own).
"""
