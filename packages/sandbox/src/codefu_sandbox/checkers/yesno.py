"""Token comparison ignoring letter case ("YES" = "yes" = "Yes")."""

from __future__ import annotations

from codefu_sandbox.checkers import CheckResult, mismatch


def check(output: str, expected: str, *, input: str = "") -> CheckResult:
    got, want = output.split(), expected.split()
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g.casefold() != w.casefold():
            return CheckResult(False, mismatch(f"token {i + 1}", g, w))
    if len(got) != len(want):
        return CheckResult(False, f"{len(got)} tokens, expected {len(want)}")
    return CheckResult(True)
