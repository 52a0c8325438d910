"""The CPU rehearsal (`cluster=cpu`): TRL's GRPO loop (`loop`) on a tiny model warm-started on
the problems' programs (`base_model`, `tiny_model`)."""
