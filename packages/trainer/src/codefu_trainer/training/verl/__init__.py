"""veRL integration: the stage-2 config, the trainer process, the judge-aware trainer, anchors
on veRL's and TRL's code, recipes, the curriculum's hooks, and the CPU backend (`cpu`)."""
