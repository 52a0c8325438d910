"""Cluster kinds (`cluster.kind`): one module each (`local`, `cpu`, `cpu_verl`, `sagemaker`),
a `base.Cluster` subclass with its checks, preflight inputs and how its run starts, registered
in `registry.CLUSTERS`, through which `codefu-train` dispatches."""
