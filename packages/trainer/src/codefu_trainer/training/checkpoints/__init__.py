"""veRL's checkpoints across hosts and resubmissions (`hosts`, `manifest`) and the final
model's export (`export`)."""
