"""The reward: C++ extraction, reward rules, Ray-dispatched judging, veRL adapter, CLI.

Importing this package (or any module in it but ``verl_adapter``) loads no torch, veRL,
transformers or vLLM, so a judge-only node needs none of them.
"""
