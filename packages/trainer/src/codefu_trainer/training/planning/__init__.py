"""Before a GPU run starts: the model's shape, the memory plan per GPU, the preflight checks."""
