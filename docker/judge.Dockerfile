# CPU judge-worker image for a Ray cluster you run yourself outside SageMaker (on premises,
# EC2, Kubernetes/KubeRay): its hosts join the cluster with the `judge` resource, e.g.
# `codefu-launcher run --resource-config FILE` with the cluster's CODEFU_RAY_AUTH_SECRET, and
# judge rewards. SageMaker jobs do not use it: a job has one TrainingImage for every
# instance group, so judge groups there run the training image (docker/train.Dockerfile).
# Build from the repository root: `nox -s image` (tags codefu-judge:<version>).
# Python package versions come from locks/cpu.txt (`nox -s lock`; tests/test_docker.py).
FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN apt-get update && apt-get install -y --no-install-recommends \
        bash g++ libseccomp2 iproute2 procps \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/codefu
COPY locks/ locks/
COPY packages/ packages/
COPY conf/ conf/
# The reward side only: codefu-trainer without its `train` extra has no torch, veRL,
# transformers or vLLM (docs/dependencies.md "Dependency sets" has the installed sizes).
RUN pip install -c locks/cpu.txt ./packages/sandbox ./packages/data \
        ./packages/launcher ./packages/trainer \
    && python -c "import codefu_sandbox, codefu_trainer.reward.service" \
    && codefu-judge --help > /dev/null
ENV CODEFU_CONF_DIR=/opt/codefu/conf \
    CODEFU_CACHE_DIR=/var/cache/codefu


WORKDIR /opt/ml/code
