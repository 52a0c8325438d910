"""Ray token authentication across the hosts of one cluster.

Every host must present the same Ray token, and SageMaker hosts share no filesystem.
The token is derived (HMAC-SHA256) from a job secret that reaches the hosts one of two
ways:

- SageMaker: at submission a random secret is written to AWS Systems Manager Parameter
  Store as a SecureString `/codefu/ray-auth/<run name>`; the job's environment carries only
  the parameter's name and version (`CODEFU_RAY_AUTH_PARAMETER=<name>:<version>`) and its
  region, and each host reads that version with the job's IAM role. The secret never
  appears in the CreateTrainingJob request.
- Elsewhere (a cluster you start yourself): `CODEFU_RAY_AUTH_SECRET` in every host's
  environment.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Any

AUTH_SECRET_ENV = "CODEFU_RAY_AUTH_SECRET"
AUTH_PARAMETER_ENV = "CODEFU_RAY_AUTH_PARAMETER"  # "<parameter name>:<version>"
AUTH_REGION_ENV = "CODEFU_RAY_AUTH_REGION"
AUTH_MODE_ENV = "CODEFU_RAY_AUTH_MODE"  # "token" (default) or "disabled" (explicit opt-out)
PARAMETER_PREFIX = "/codefu/ray-auth/"


class AuthError(RuntimeError):
    """The hosts cannot agree on a Ray token; the message says what to set or grant."""


def derive_auth_token(secret: str) -> str:
    """The cluster's Ray token: an HMAC of the job secret, identical on every host."""
    return hmac.new(secret.encode(), b"codefu-ray-auth-token-v1", hashlib.sha256).hexdigest()


def parameter_name(run_name: str) -> str:
    """The Parameter Store name holding the Ray secret of a run."""
    return PARAMETER_PREFIX + run_name


def store_job_secret(boto_session: Any, run_name: str) -> dict[str, str]:
    """Write a fresh random secret for `run_name` (a new version of its parameter).

    Returns the job environment entries that let the hosts read exactly this version.
    Needs `ssm:PutParameter` on the parameter for the submitting identity.
    """
    from botocore.exceptions import ClientError

    name = parameter_name(run_name)
    try:
        response = boto_session.client("ssm").put_parameter(
            Name=name,
            Value=secrets.token_hex(32),
            Type="SecureString",
            Overwrite=True,
            Description="Ray cluster auth secret of a CodeFu run; rewritten at each submission.",
        )
    except ClientError as exc:
        raise AuthError(
            f"Could not store the Ray auth secret {name} in Parameter Store ({exc}). The "
            "submitting identity needs ssm:PutParameter on "
            f"arn:aws:ssm:<region>:<account>:parameter{PARAMETER_PREFIX}* (see docs/sagemaker.md)."
        ) from exc
    return {
        AUTH_PARAMETER_ENV: f"{name}:{response['Version']}",
        AUTH_REGION_ENV: str(boto_session.region_name),
    }


def fetch_job_secret(reference: str, region: str | None) -> str:
    """Read the secret version named by CODEFU_RAY_AUTH_PARAMETER with this host's role."""
    try:
        import boto3
        from botocore.exceptions import BotoCoreError, ClientError
    except ModuleNotFoundError as exc:
        raise AuthError(
            f"{AUTH_PARAMETER_ENV} is set but boto3 is not installed: install "
            "codefu-launcher[submit] in the image."
        ) from exc
    try:
        ssm = boto3.client("ssm", region_name=region or None)
        response = ssm.get_parameter(Name=reference, WithDecryption=True)
    except (BotoCoreError, ClientError) as exc:
        raise AuthError(
            f"Could not read the Ray auth secret {reference} from Parameter Store ({exc}). "
            f"The job's execution role needs ssm:GetParameter on "
            f"arn:aws:ssm:<region>:<account>:parameter{PARAMETER_PREFIX}* "
            "(see docs/sagemaker.md)."
        ) from exc
    return str(response["Parameter"]["Value"])


def auth_environment(env: Mapping[str, str], expected_nodes: int) -> dict[str, str]:
    """RAY_AUTH_MODE / RAY_AUTH_TOKEN for Ray processes and drivers on this host.

    The secret comes from CODEFU_RAY_AUTH_SECRET, else from the Parameter Store version
    named by CODEFU_RAY_AUTH_PARAMETER. A single-node job may do without: it gets a random
    token. CODEFU_RAY_AUTH_MODE=disabled turns authentication off explicitly.
    """
    mode = env.get(AUTH_MODE_ENV, "token").strip().lower()
    if mode == "disabled":
        return {"RAY_AUTH_MODE": "disabled"}
    if mode != "token":
        raise AuthError(f"{AUTH_MODE_ENV}={mode!r}: use 'token' (default) or 'disabled'.")
    secret = env.get(AUTH_SECRET_ENV, "")
    reference = env.get(AUTH_PARAMETER_ENV, "")
    if not secret and reference:
        secret = fetch_job_secret(reference, env.get(AUTH_REGION_ENV))
    if not secret:
        if expected_nodes > 1:
            raise AuthError(
                f"Neither {AUTH_PARAMETER_ENV} nor {AUTH_SECRET_ENV} is set, so the "
                f"{expected_nodes} hosts cannot agree on a Ray auth token. Submit with "
                "codefu_launcher.submit (it sets the parameter), set the secret to one random "
                f"value on every host, or set {AUTH_MODE_ENV}=disabled to run without "
                "authentication."
            )
        secret = secrets.token_hex(32)
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": derive_auth_token(secret)}


# --- the user's own secrets ----------------------------------------------------------------

# "NAME=/parameter/name,NAME2=/other" (names only): each host reads the SecureStrings with
# the job's role and hands the values to Ray and the entrypoint as NAME, NAME2.
SECRET_PARAMETERS_ENV = "CODEFU_SECRET_PARAMETERS"


def encode_secret_parameters(parameters: Mapping[str, str]) -> str:
    """The job environment value that names `parameters` (variable -> parameter name)."""
    return ",".join(f"{name}={parameters[name]}" for name in sorted(parameters))


def decode_secret_parameters(value: str) -> dict[str, str]:
    """Inverse of `encode_secret_parameters`; raises AuthError on a malformed value."""
    out: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        name, sep, parameter = item.partition("=")
        if not sep or not name or not parameter:
            raise AuthError(f"{SECRET_PARAMETERS_ENV} item {item!r} is not NAME=/parameter.")
        out[name] = parameter
    return out


def secret_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The user's secrets named by CODEFU_SECRET_PARAMETERS, read from Parameter Store."""
    parameters = decode_secret_parameters(env.get(SECRET_PARAMETERS_ENV, ""))
    if not parameters:
        return {}
    try:
        import boto3
        from botocore.exceptions import BotoCoreError, ClientError
    except ModuleNotFoundError as exc:
        raise AuthError(
            f"{SECRET_PARAMETERS_ENV} is set but boto3 is not installed: install "
            "codefu-launcher[submit] in the image."
        ) from exc
    region = env.get(AUTH_REGION_ENV) or env.get("AWS_REGION") or None
    ssm = boto3.client("ssm", region_name=region)
    values: dict[str, str] = {}
    for name, parameter in parameters.items():
        try:
            response = ssm.get_parameter(Name=parameter, WithDecryption=True)
        except (BotoCoreError, ClientError) as exc:
            raise AuthError(
                f"Could not read {parameter} (for {name}) from Parameter Store ({exc}). The "
                "job's execution role needs ssm:GetParameter on it (and kms:Decrypt when it "
                "is encrypted with your own KMS key)."
            ) from exc
        values[name] = str(response["Parameter"]["Value"])
    return values
