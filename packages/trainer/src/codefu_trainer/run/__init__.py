"""What training and evaluation share, importing neither: the stage-1 configuration and its
composition, overrides, prepared-data checks, the training-stack and GPU checks, local Ray,
prompt rows, progress lines and tracking."""
