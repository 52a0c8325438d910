"""S3 staging of a job's local input directories, once per content.

A local directory goes under <root>/codefu-staged/<channel>/<content digest>/, the digest
computed from its files' relative paths and bytes: a later submission of the same files
finds them there and uploads nothing; changed files get a new prefix.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codefu_launcher.spec import JobSpec, SubmitError

STAGED_PREFIX = "codefu-staged"  # <root>/codefu-staged/<channel>/<content digest>/


@dataclass
class StagedChannel:
    """A local directory as an S3 prefix named by its content."""

    source: str
    s3_uri: str
    files: int
    size_bytes: int
    uploaded: int  # files this submission uploaded (0: every file was already there)


def s3_root(configured: str | None, sagemaker_session: Any) -> str:
    """`configured` without its trailing slash, else s3://<SDK default bucket>[/<prefix>]."""
    if configured:
        return configured.rstrip("/")
    root = f"s3://{sagemaker_session.default_bucket()}"
    prefix = (sagemaker_session.default_bucket_prefix or "").strip("/")
    return root + (f"/{prefix}" if prefix else "")


def directory_files(root: Path) -> list[tuple[str, Path]]:
    """(relative POSIX path, path) of every file under `root`, symlinks followed, sorted."""
    found: list[tuple[str, Path]] = []
    for dirpath, _, filenames in os.walk(root, followlinks=True):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file():
                found.append((path.relative_to(root).as_posix(), path))
    return sorted(found)


def content_digest(files: list[tuple[str, Path]]) -> str:
    """A digest of the files' relative paths and bytes: equal for equal directories."""
    total = hashlib.sha256()
    for rel, path in files:
        one = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                one.update(block)
        total.update(f"{rel}\0{path.stat().st_size}\0{one.hexdigest()}\n".encode())
    return total.hexdigest()[:16]


def stage_directory(
    source: str, channel: str, root: str, boto_session: Any, upload: bool
) -> StagedChannel:
    """Put a local directory under <root>/codefu-staged/<channel>/<digest>/ once.

    The prefix is named by the directory's content, so a later submission of the same
    files finds them there and uploads nothing; changed files get a new prefix. With
    `upload=False` (dry run) only the prefix is computed.
    """
    files = directory_files(Path(source))
    if not files:
        raise SubmitError(f"Input channel {channel!r}: {source} has no files.")
    digest = content_digest(files)
    uri = f"{root}/{STAGED_PREFIX}/{channel}/{digest}/"
    size = sum(path.stat().st_size for _, path in files)
    uploaded = 0
    if upload:
        from botocore.exceptions import ClientError

        bucket, _, prefix = uri.removeprefix("s3://").partition("/")
        s3 = boto_session.client("s3")
        for rel, path in files:
            key = prefix + rel
            try:
                head = s3.head_object(Bucket=bucket, Key=key)
                if head.get("ContentLength") == path.stat().st_size:
                    continue
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code")
                if code == "NoSuchBucket":
                    raise SubmitError(
                        f"Cannot stage {source} in {uri}: the bucket does not exist "
                        f"(NoSuchBucket). Create it, or set staging_s3_uri (Hydra: "
                        "cluster.sagemaker.output_s3_uri) to a bucket that exists."
                    ) from exc
                if code not in {"404", "NoSuchKey"}:
                    raise SubmitError(
                        f"Cannot stage {source} in {uri}: S3 answered {exc}. Your identity "
                        "needs s3:GetObject, s3:PutObject and s3:ListBucket there."
                    ) from exc
            s3.upload_file(str(path), bucket, key)
            uploaded += 1
    return StagedChannel(source, uri, len(files), size, uploaded)


def stage_channels(
    spec: JobSpec, sagemaker_session: Any, boto_session: Any, upload: bool
) -> dict[str, StagedChannel]:
    local = {k: v for k, v in spec.input_channels.items() if not v.startswith("s3://")}
    if not local:
        return {}
    root = s3_root(spec.staging_s3_uri or spec.output_s3_uri, sagemaker_session)
    return {
        name: stage_directory(source, name, root, boto_session, upload)
        for name, source in local.items()
    }


def report_staged(staged: dict[str, StagedChannel], uploaded: bool) -> None:
    for name, done in staged.items():
        what = f"{done.uploaded} of {done.files} files uploaded" if uploaded else "dry run"
        print(
            f"codefu-launcher submit: channel {name!r}: {done.source} -> {done.s3_uri} "
            f"({done.files} files, {done.size_bytes / 1e6:.1f} MB; {what})",
            file=sys.stderr,
        )
