"""Cluster kinds (`cluster.kind`): one module each (`local`, `cpu`, `cpu_verl`, `sagemaker`),
a `base.Cluster` subclass with its facts, checks, preflight inputs and how its run starts,
registered by one entry point in the group `codefu.cluster_kinds`
(`run.cluster_kinds.CLUSTER_KINDS`), through which `codefu-train` dispatches
(`registry.cluster_of`)."""
