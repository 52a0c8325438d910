# GPU training image for SageMaker: veRL + vLLM + Ray + flash-attn + g++ + libseccomp,
# EFA/NCCL for p4de/p5, and the four CodeFu packages. Build from the repository root:
#   nox -s image            (tags codefu-train:<version>; `-- push` pushes to ECR)
# Python package versions come from locks/cuda.txt (`nox -s lock`). Its torch 2.11.0 and
# vLLM 0.24.0 wheels are built for CUDA 13.0, so the base is CUDA 13.0 (its nvcc compiles
# flash-attn; tests/test_docker.py checks that both agree). CUDA 13 needs host driver >= 580;
# on older data-center drivers the image carries NVIDIA's forward-compatibility libraries
# (cuda-compat-13-0, /usr/local/cuda/compat), which `codefu-launcher run` puts on
# LD_LIBRARY_PATH after checking the host's driver, and stops the job with a message when
# CUDA still does not initialise (codefu_launcher.cuda; docs/sagemaker.md, "CUDA driver").
#
# PROFILE=cuda (default) builds every stage below. PROFILE=cpu builds the same file's CPU
# part on a CPU base (BASE_IMAGE: Debian or Ubuntu with apt): every step but the CUDA-only
# ones (the `-cuda` stages: cuda-compat, EFA, flash-attn), with locks/cpu.txt and
# TRAINER_EXTRAS without `gpu` (vLLM). `nox -s image -- --local-base` builds it as
# codefu-train:<version>-cpu and `nox -s image-smoke` runs the smoke in it (docs/images.md).
ARG BASE_IMAGE=nvidia/cuda:13.0.2-cudnn-devel-ubuntu22.04
ARG PROFILE=cuda

# Wheels for installing without a package index: empty, unless the build is given
# `--build-context wheels=DIR` (a `nox -s bundle -- --image-tools` folder) and
# `--build-arg NO_INDEX=--no-index`, which keeps pip and uv off the package index.
FROM scratch AS wheels

FROM ${BASE_IMAGE} AS system
ARG PYTHON_VERSION=3.11

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    UV_NO_CACHE=1

# bash, python3 and pip are required by SageMaker; g++ and libseccomp by the judge;
# iproute2 for the launcher's interface discovery.
RUN apt-get update && apt-get install -y --no-install-recommends \
        bash ca-certificates curl git g++ make libseccomp2 libseccomp-dev iproute2 \
        openssh-client openssh-server libibverbs-dev \
        python${PYTHON_VERSION} python${PYTHON_VERSION}-dev python${PYTHON_VERSION}-venv python3-pip \
    && update-alternatives --install /usr/bin/python3 python3 /usr/bin/python${PYTHON_VERSION} 1 \
    && update-alternatives --install /usr/bin/python python /usr/bin/python${PYTHON_VERSION} 1 \
    && rm -rf /var/lib/apt/lists/*

# CUDA only: cuda-compat-13-0 (from the CUDA apt repository the base image configures) for
# hosts whose driver predates CUDA 13, and EFA (libfabric + aws-ofi-nccl) so NCCL uses the
# p4de/p5 EFA network.
FROM system AS system-cuda
ARG EFA_INSTALLER_VERSION=1.43.1
RUN apt-get update && apt-get install -y --no-install-recommends cuda-compat-13-0 \
    && ls /usr/local/cuda/compat/libcuda.so.* \
    && rm -rf /var/lib/apt/lists/*
RUN cd /tmp \
    && curl -fsSLO https://efa-installer.amazonaws.com/aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz \
    && tar -xf aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz \
    && cd aws-efa-installer && ./efa_installer.sh -y --skip-kmod --skip-limit-conf --no-verify \
    && cd / && rm -rf /tmp/aws-efa-installer*
ENV PATH=/opt/amazon/efa/bin:${PATH} \
    LD_LIBRARY_PATH=/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH} \
    FI_PROVIDER=efa \
    FI_EFA_USE_DEVICE_RDMA=1 \
    NCCL_SOCKET_IFNAME=^lo,docker

FROM system AS system-cpu

# The third-party packages of the training stack, every version pinned by the lock, from
# the pyprojects alone: a change to the packages' code rebuilds only the layers after
# `COPY packages/`. Bytecode compiled at install: every Ray worker of every node imports
# torch, transformers and veRL at start.
FROM system-${PROFILE} AS dependencies
ARG PROFILE
ARG TRAINER_EXTRAS=train,gpu,sagemaker-mlflow
ARG NO_INDEX=
ENV UV_COMPILE_BYTECODE=1
WORKDIR /opt/codefu
COPY locks/ locks/
COPY docker/requirements.py docker/
COPY packages/sandbox/pyproject.toml packages/sandbox/
COPY packages/data/pyproject.toml packages/data/
COPY packages/launcher/pyproject.toml packages/launcher/
COPY packages/trainer/pyproject.toml packages/trainer/
RUN --mount=type=bind,from=wheels,target=/wheels \
    python3 -m pip install ${NO_INDEX} --find-links /wheels -c locks/${PROFILE}.txt uv \
    && python3 docker/requirements.py sandbox data "launcher[submit]" \
        "trainer[${TRAINER_EXTRAS}]" > /tmp/requirements.txt \
    && uv pip install ${NO_INDEX} --find-links /wheels --system --break-system-packages \
        --python python3 -c locks/${PROFILE}.txt -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# CUDA only: flash-attn (for attn_implementation=flash_attention_2, remove padding and
# Ulysses sequence parallelism) has only a source archive on the package index: compile it
# against the installed torch with this image's nvcc, with its build requirements from the
# lock (setup.py imports wheel; ninja runs the build). FLASH_ATTENTION_FORCE_BUILD skips its
# attempt to download a prebuilt wheel. Expect tens of minutes (fewer archs / more MAX_JOBS:
# faster). Before the packages' code, so that a change to it does not compile it again.
FROM dependencies AS dependencies-cuda
# flash-attn is compiled for these GPU architectures only: 8.0 A100 (p4de), 9.0 H100 (p5).
ARG FLASH_ATTN_CUDA_ARCHS="80;90"
ARG MAX_JOBS=8
RUN uv pip install --system --break-system-packages --python python3 -c locks/cuda.txt \
        ninja packaging psutil setuptools wheel \
    && FLASH_ATTENTION_FORCE_BUILD=TRUE FLASH_ATTN_CUDA_ARCHS="${FLASH_ATTN_CUDA_ARCHS}" \
        MAX_JOBS="${MAX_JOBS}" \
        uv pip install --system --break-system-packages --python python3 -c locks/cuda.txt \
        --no-build-isolation flash-attn \
    && python3 -c "import flash_attn"

FROM dependencies AS dependencies-cpu

# The CodeFu packages, built from their source (their dependencies are in place).
FROM dependencies-${PROFILE}
ARG PROFILE
ARG NO_INDEX=
COPY packages/ packages/
COPY conf/ conf/
RUN --mount=type=bind,from=wheels,target=/wheels \
    uv pip install ${NO_INDEX} --find-links /wheels --system --break-system-packages \
        --python python3 --no-deps -c locks/${PROFILE}.txt ./packages/sandbox \
        ./packages/data ./packages/launcher ./packages/trainer \
    && python3 -c "import codefu_sandbox, codefu_data, codefu_trainer, codefu_launcher" \
    && codefu-judge --help > /dev/null
# The configurations are in /opt/codefu/conf: `codefu-train --config-dir /opt/codefu/conf`
# (a SageMaker job passes its own copy).
ENV CODEFU_CACHE_DIR=/var/cache/codefu

WORKDIR /opt/ml/code
