"""Evaluation: pass@k of a model on held-out problems, judged by the reward path.

`codefu-eval` (cli.py) composes conf/eval.yaml with a protocol's preset (config.py:
`eval.protocol=livecodebench`), reads the prepared data or prepares `data.source`
(prepared.py), generates with vLLM on GPUs or transformers on CPU (generation.py), judges
with `RewardService` (run.py), keeps every judged sample in a resumable samples.jsonl
(store.py), and writes summary.json, a console table and plots (summary.py, plots.py);
`codefu-eval compare` sets two evaluations side by side (compare.py).
torch, transformers, vLLM, MLflow and matplotlib are imported inside the functions that use them.
"""
