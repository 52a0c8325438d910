"""The CPU rehearsal's dynamic sampling: which groups count as zero-variance, and how the
kept groups of several TRL generation batches become one training batch."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from codefu_trainer.training.rehearsal.loop import select_rows, zero_variance_groups

PAD = 7


def test_zero_variance_groups_are_groups_whose_scores_all_agree() -> None:
    scores = [1.0, 1.0, 1.0, 0.0, 1.0, 0.0, -0.5, -0.5, -0.5, 1.0, 1.0, 0.0]
    assert zero_variance_groups(scores, 3) == [True, False, True, False]
    assert zero_variance_groups([0.5] * 4, 2) == [True, True]


def _output(prompt_width: int, width: int, rows: int, tag: int) -> dict:
    """A TRL generation output: prompts left-padded, completions right-padded."""
    ids = torch.full((rows, width), PAD)
    mask = torch.zeros((rows, width), dtype=torch.long)
    for r in range(rows):
        n = 1 + (r + tag) % width
        ids[r, :n] = tag * 100 + r
        mask[r, :n] = 1
    prompt = torch.full((rows, prompt_width), PAD)
    prompt[:, -2:] = tag
    prompt_mask = torch.zeros((rows, prompt_width), dtype=torch.long)
    prompt_mask[:, -2:] = 1
    return {
        "prompt_ids": prompt,
        "prompt_mask": prompt_mask,
        "completion_ids": ids,
        "completion_mask": mask,
        "old_per_token_logps": -mask.float(),
        "advantages": torch.arange(rows, dtype=torch.float) + tag,
        "num_items_in_batch": mask.sum(),
    }


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(st.integers(2, 5), st.integers(1, 9)), min_size=1, max_size=3),
    st.data(),
)
def test_selected_rows_keep_their_tokens_and_masks(
    shapes: list[tuple[int, int]], data: st.DataObject
) -> None:
    rows_per = 4
    outputs = [_output(p, w, rows_per, tag) for tag, (p, w) in enumerate(shapes)]
    rows = data.draw(
        st.lists(
            st.tuples(st.integers(0, len(shapes) - 1), st.integers(0, rows_per - 1)), min_size=1
        )
    )
    out = select_rows(outputs, rows, PAD)
    width = max(w for _, w in shapes)
    assert out["completion_ids"].shape == (len(rows), width)
    assert int(out["num_items_in_batch"]) == int(out["completion_mask"].sum())
    for n, (i, r) in enumerate(rows):
        src = outputs[i]
        tokens = src["completion_ids"][r][src["completion_mask"][r].bool()]
        assert torch.equal(out["completion_ids"][n][out["completion_mask"][n].bool()], tokens)
        assert torch.equal(
            out["prompt_ids"][n][out["prompt_mask"][n].bool()],
            src["prompt_ids"][r][src["prompt_mask"][r].bool()],
        )
        assert out["advantages"][n] == src["advantages"][r]
        # Padding is padding: pad ids, zero masks and zero log-probs after the completion.
        k = int(src["completion_mask"][r].sum())
        assert bool((out["completion_ids"][n][k:] == PAD).all())
        assert float(out["old_per_token_logps"][n][k:].abs().sum()) == 0.0


def test_selecting_every_row_of_one_output_changes_nothing() -> None:
    only = _output(3, 5, 4, 1)
    out = select_rows([only], [(0, r) for r in range(4)], PAD)
    for key, value in only.items():
        assert torch.equal(out[key], value), key


@pytest.mark.parametrize("bad", [[(1, 0)], [(0, 9)]])
def test_a_row_that_does_not_exist_is_an_error(bad: list[tuple[int, int]]) -> None:
    with pytest.raises((IndexError, RuntimeError)):
        select_rows([_output(3, 5, 4, 1)], bad, PAD)
