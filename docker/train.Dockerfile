# GPU training image for SageMaker: veRL + vLLM + Ray + g++ + libseccomp, EFA/NCCL for
# p4de/p5, and the four CodeFu packages. Build from the repository root:
#   nox -s image            (tags codefu-train:<version>; `-- push` pushes to ECR)
# Versions below must match the packages' metadata (checked by tests/test_docker.py).
FROM nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04

ARG PYTHON_VERSION=3.11
ARG TORCH_VERSION=2.13.0
ARG VERL_VERSION=0.9.1
ARG VLLM_VERSION=0.33.0
ARG RAY_VERSION=2.60.0
ARG TRL_VERSION=1.16.0
ARG EFA_INSTALLER_VERSION=1.43.1
ARG CODEFU_VERSION=0.1.0

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# bash, python3 and pip are required by SageMaker; g++ and libseccomp by the judge;
# iproute2 for the launcher's interface discovery.
RUN apt-get update && apt-get install -y --no-install-recommends \
        bash ca-certificates curl git g++ make libseccomp2 libseccomp-dev iproute2 \
        openssh-client openssh-server libibverbs-dev \
        python${PYTHON_VERSION} python${PYTHON_VERSION}-dev python${PYTHON_VERSION}-venv python3-pip \
    && update-alternatives --install /usr/bin/python3 python3 /usr/bin/python${PYTHON_VERSION} 1 \
    && update-alternatives --install /usr/bin/python python /usr/bin/python${PYTHON_VERSION} 1 \
    && rm -rf /var/lib/apt/lists/*

# EFA (libfabric + aws-ofi-nccl) so NCCL uses the p4de/p5 EFA network.
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

RUN python3 -m pip install --upgrade pip \
    && python3 -m pip install "torch==${TORCH_VERSION}" \
    && python3 -m pip install "vllm==${VLLM_VERSION}" "verl==${VERL_VERSION}" \
        "ray[default]==${RAY_VERSION}" "trl==${TRL_VERSION}"

# The CodeFu packages and their configuration.
WORKDIR /opt/codefu
COPY packages/ packages/
COPY conf/ conf/
RUN python3 -m pip install ./packages/sandbox ./packages/data "./packages/launcher[submit]" \
        "./packages/trainer[gpu]" \
    && python3 -c "import codefu_sandbox, codefu_data, codefu_trainer, codefu_launcher" \
    && codefu-judge --help > /dev/null
ENV CODEFU_CONF_DIR=/opt/codefu/conf \
    CODEFU_CACHE_DIR=/var/cache/codefu

WORKDIR /opt/ml/code
