"""Submitting a training run as a SageMaker job (`job`)."""
