"""A training run's metrics as PNG plots and a judge table (`python -m
codefu_trainer.training.report`): reading the records, drawing, the table, the CLI."""
