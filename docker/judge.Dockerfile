# CPU judge-worker image for a Ray cluster you run yourself outside SageMaker (on premises,
# EC2, Kubernetes/KubeRay): its hosts join the cluster with the `judge` resource, e.g.
# `codefu-launcher run --resource-config FILE` with the cluster's CODEFU_RAY_AUTH_SECRET, and
# judge rewards. SageMaker jobs do not use it: a job has one TrainingImage for every
# instance group, so judge groups there run the training image (docker/train.Dockerfile).
# Build from the repository root: `nox -s image` (tags codefu-judge:<version>); where no base
# can be pulled, `nox -s image -- --base local` builds on a Debian base it makes, with the
# Python packages from an offline bundle (docs/images.md, which also gives the privileges
# a judge container needs).
# Python package versions come from locks/cpu.txt (`nox -s lock`; tests/test_docker.py).
ARG BASE_IMAGE=python:3.11-slim-bookworm

# Wheels for installing without a package index: empty, unless the build is given
# `--build-context wheels=DIR` (a `nox -s bundle -- --image-tools` folder) and
# `--build-arg NO_INDEX=--no-index`, which keeps pip off the package index.
FROM scratch AS wheels

# BASE_IMAGE: Debian bookworm (for its apt packages) with Python 3.11 as `python` and a
# `pip` that may install into it.
FROM ${BASE_IMAGE}
ARG NO_INDEX=

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN apt-get update && apt-get install -y --no-install-recommends \
        bash g++ libseccomp2 iproute2 procps \
    && rm -rf /var/lib/apt/lists/*

# The third-party packages first, from the pyprojects alone: a change to the packages'
# code rebuilds only the layers after `COPY packages/`. The reward side only:
# codefu-trainer without its `train` extra has no torch, veRL, transformers or vLLM
# (docs/dependencies.md "Dependency sets" has the installed sizes). With them hatchling, the
# packages' build backend: the step after `COPY packages/` builds them with it, in place.
WORKDIR /opt/codefu
COPY locks/ locks/
COPY docker/requirements.py docker/
COPY packages/sandbox/pyproject.toml packages/sandbox/
COPY packages/data/pyproject.toml packages/data/
COPY packages/launcher/pyproject.toml packages/launcher/
COPY packages/trainer/pyproject.toml packages/trainer/
RUN --mount=type=bind,from=wheels,target=/wheels \
    python docker/requirements.py sandbox data launcher trainer > /tmp/requirements.txt \
    && pip install ${NO_INDEX} --find-links /wheels -c locks/cpu.txt -r /tmp/requirements.txt \
        hatchling \
    && rm /tmp/requirements.txt

COPY packages/ packages/
COPY conf/ conf/
RUN pip install --no-deps --no-build-isolation -c locks/cpu.txt \
        ./packages/sandbox ./packages/data ./packages/launcher ./packages/trainer \
    && python -c "import codefu_sandbox, codefu_trainer.reward.service" \
    && codefu-judge --help > /dev/null
# A judge in this image starts only with every sandbox layer, else it stops with one line
# naming what the container lacks (docs/images.md has the least privileges that give them all).
# Ray refuses a node whose Python patch release differs from the cluster's; this image's 3.11
# is its base's, the training cluster's its own (3.11's patch releases pickle alike).
ENV CODEFU_CACHE_DIR=/var/cache/codefu \
    CODEFU_SANDBOX_REQUIRE=cgroup,uid,seccomp,landlock,ipcns \
    RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL=minor

WORKDIR /opt/ml/code
