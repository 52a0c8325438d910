"""Training: configuration, the `codefu-train` entry, veRL on GPUs, the CPU rehearsal,
SageMaker job submission, tracking and plots."""
