"""Every use of a library's private name is anchored, and every anchor still holds."""

from __future__ import annotations

import dataclasses
import re

from codefu_trainer.training.verl import anchors
from codefu_trainer.training.verl.cpu import patches

from ..conftest import REPO

# docs/fsdp.md's table rows: | what holds | `verl/<path>:<line>` | `<text at that line>` |
DOC_ANCHOR = re.compile(r"^\| (.+?) \| `verl/([^`:]+):(\d+)` \| `(.+)` \|$", re.M)


def test_every_anchored_library_line_still_reads_as_expected() -> None:
    # Fails when a library upgrade changes a line an override relies on: revisit it.
    assert anchors.check(anchors.OVERRIDES) == []
    assert anchors.check(patches.PATCHES) == []  # the same check (patches.check)


def test_the_check_reports_an_anchor_whose_text_is_gone() -> None:
    for override in (anchors.OVERRIDES[0], patches.PATCHES[0]):
        first = override.anchors[0]
        gone = dataclasses.replace(first, text="no such text")
        (wrong,) = anchors.check([dataclasses.replace(override, anchors=(gone,))])
        assert override.name in wrong and first.where() in wrong and "no such text" in wrong


def test_each_override_names_its_library_and_why() -> None:
    names = [o.name for o in (*anchors.OVERRIDES, *patches.PATCHES)]
    assert len(names) == len(set(names))
    assert {a.library for o in anchors.OVERRIDES for a in o.anchors} == {"trl", "verl", "ray"}
    for override in anchors.OVERRIDES:
        assert override.why and override.anchors, override.name


def test_docs_fsdp_anchors_hold() -> None:
    """docs/fsdp.md's claims about veRL's FSDP2 path name lines that still read as quoted."""
    rows = DOC_ANCHOR.findall((REPO / "docs" / "fsdp.md").read_text())
    assert len(rows) >= 15
    doc = anchors.Override(
        name="docs/fsdp.md",
        why="what the docs say holds",
        anchors=tuple(anchors.Anchor(path, int(line), text) for _, path, line, text in rows),
    )
    assert anchors.check([doc]) == []
