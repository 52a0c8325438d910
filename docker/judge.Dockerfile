# CPU judge-worker image for a Ray cluster you run yourself outside SageMaker (on premises,
# EC2, Kubernetes/KubeRay): its hosts join the cluster with the `judge` resource, e.g.
# `codefu-launcher run --resource-config FILE` with the cluster's CODEFU_RAY_AUTH_SECRET, and
# judge rewards. SageMaker jobs do not use it: a job has one TrainingImage for every
# instance group, so judge groups there run the training image (docker/train.Dockerfile).
# Build from the repository root: `nox -s image` (tags codefu-judge:<version>).
# Versions below must match the packages' metadata (checked by tests/test_docker.py).
FROM python:3.11-slim-bookworm

ARG TORCH_VERSION=2.13.0
ARG RAY_VERSION=2.60.0
ARG CODEFU_VERSION=0.1.0

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN apt-get update && apt-get install -y --no-install-recommends \
        bash g++ libseccomp2 iproute2 procps \
    && rm -rf /var/lib/apt/lists/*

# The reward actors import codefu_trainer, which pulls veRL and therefore torch: take
# torch's CPU build so the image carries no CUDA libraries.
ARG TORCH_INDEX_URL=""
RUN if [ -n "$TORCH_INDEX_URL" ]; then \
        pip install --extra-index-url "$TORCH_INDEX_URL" "torch==${TORCH_VERSION}+cpu"; \
    else pip install "torch==${TORCH_VERSION}"; fi

WORKDIR /opt/codefu
COPY packages/ packages/
COPY conf/ conf/
RUN pip install "ray[default]==${RAY_VERSION}" ./packages/sandbox ./packages/data \
        "./packages/launcher[submit]" ./packages/trainer \
    && python -c "import codefu_sandbox, codefu_trainer" \
    && codefu-judge --help > /dev/null
ENV CODEFU_CONF_DIR=/opt/codefu/conf \
    CODEFU_CACHE_DIR=/var/cache/codefu


WORKDIR /opt/ml/code
