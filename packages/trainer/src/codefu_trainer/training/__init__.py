"""Training: the `codefu-train` entry (`cli`), both configuration stages (`compose`), the
curriculum, and one sub-package per job: `verl` (veRL on GPUs, and on CPU in `verl.cpu`),
`planning` (GPU memory and preflight), `checkpoints` (across hosts; the final model),
`rehearsal` (the TRL CPU rehearsal), `sagemaker` (job submission), `report` (plots)."""
