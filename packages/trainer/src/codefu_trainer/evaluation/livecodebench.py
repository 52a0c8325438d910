"""What `eval.protocol=livecodebench` takes from LiveCodeBench beyond plain settings: its
model styles (`eval.lcb_style`: the prompt, rendered as its runner renders it) and its
releases (`eval.release`: the files its dataset's `version_tag` selects).

Styles (LiveCodeBench's `LMStyle`, `lcb_runner/prompts/code_generation.py`):

- `generic`: its OpenAIChat, LLaMa3, DeepSeekAPI, TogetherAI, CohereCommand and MistralWeb
  styles; its system message and question through the model's chat template
  (data.prompt.style `livecodebench`).
- `deepseek_r1`: its DeepSeekR1 style (R1, its distilled models, DeepCoder, Nemotron,
  MetaStone); its text with R1's special tokens, as it is (`livecodebench_deepseek_r1`).
- `auto`: `deepseek_r1` when model.path names an R1-like model (`R1_LIKE`), else `generic`.

Both styles take the code as its `extract_code` does for them (`reward.extraction:
livecodebench`) and stop at its stop string (`eval.stop`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codefu_data.formats.livecodebench import RELEASES
from codefu_data.livecodebench_prompts import DEEPSEEK_R1, GENERIC
from codefu_trainer.run.overrides import ConfigError

AUTO = "auto"
# eval.lcb_style -> data.prompt.style
STYLES = {"generic": GENERIC, "deepseek_r1": DEEPSEEK_R1}
# Text in model.path (any case) that names a model LiveCodeBench prompts in its DeepSeekR1
# style (its lm_styles.py: DeepSeek-R1 and R1-0528, R1's distilled Qwen and Llama models,
# DeepCoder, Llama-3.1-Nemotron Ultra and Nano, MetaStone-L1).
R1_LIKE = (
    "deepseek-r1",
    "deepseek_r1",
    "deepcoder",
    "nemotron-ultra",
    "nemotron-nano",
    "metastone",
)


def lcb_style(style: str, model_path: str) -> str:
    """`eval.lcb_style` resolved: `generic` or `deepseek_r1` (`auto`: from model.path).
    ConfigError naming the choices for another value."""
    if style == AUTO:
        name = model_path.lower()
        return "deepseek_r1" if any(mark in name for mark in R1_LIKE) else "generic"
    if style not in STYLES:
        raise ConfigError(
            f"eval.lcb_style={style}: no such LiveCodeBench model style; choose "
            f"{', '.join([AUTO, *STYLES])}."
        )
    return style


def release_names(release: str) -> tuple[str, ...]:
    """The file names LiveCodeBench's `version_tag` `release` reads; ConfigError naming the
    releases for an unknown one."""
    wanted = RELEASES.get(release)
    if wanted is None:
        raise ConfigError(
            f"eval.release={release}: LiveCodeBench has no such release; choose one of "
            f"{', '.join(RELEASES)}."
        )
    return wanted


def release_files(release: str, files: Sequence[Path]) -> list[Path]:
    """The files of `files` that LiveCodeBench's `version_tag` `release` selects (by name:
    test.jsonl, test2.jsonl, …), in its order. ConfigError for an unknown release; ValueError
    naming the files it needs that `files` lack."""
    wanted = release_names(release)
    by_name = {path.name: path for path in files}
    missing = [name for name in wanted if name not in by_name]
    if missing:
        raise ValueError(
            f"eval.release={release} reads {', '.join(wanted)}; data.source's files lack "
            f"{', '.join(missing)}: add them (from LiveCodeBench's code_generation_lite "
            "dataset) or choose another release."
        )
    return [by_name[name] for name in wanted]
