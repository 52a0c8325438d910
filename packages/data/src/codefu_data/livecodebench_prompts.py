"""LiveCodeBench's code-generation prompts (its `lcb_runner/prompts/code_generation.py`), per
model style, as `data.prompt.style` names them:

- `livecodebench`: its generic chat style (its OpenAIChat, LLaMa3, DeepSeekAPI, TogetherAI,
  CohereCommand and MistralWeb styles): a system message, then the question as a user
  message (`### Question:`, `### Format:` with the starter code or `# YOUR CODE HERE`,
  `### Answer:`), rendered by the model's chat template.
- `livecodebench_deepseek_r1`: its DeepSeekR1 style (R1 and the models it lists with it:
  R1's distilled models, DeepCoder, …): one text, DeepSeek-R1's own special tokens written
  out, given to the model as it is (`TEXT_ROLE`), never through a chat template.

The texts are LiveCodeBench's to the character; the parity test compares them with what its
own `format_prompt_generation` gives (packages/trainer/tests/evaluation/lcb_parity/).
"""

from __future__ import annotations

# The role of a prompt's one message when the prompt is a text for the model as it is
# (LiveCodeBench hands such texts to vLLM as prompts), not chat messages for its template.
TEXT_ROLE = "text"

SYSTEM_GENERIC = (
    "You are an expert Python programmer. You will be given a question (problem "
    "specification) and will generate a correct Python program that matches the "
    "specification and passes all tests."
)
SYSTEM_DEEPSEEK_R1 = (
    "<｜begin▁of▁sentence｜>A conversation between User and Assistant. The user asks a "
    "question, and the Assistant solves it. The assistant first thinks about the reasoning "
    "process in the mind and then provides the user with the answer. The reasoning process "
    "and answer are enclosed within <think> </think> and <answer> </answer> tags, "
    "respectively, i.e., <think> reasoning process here </think> <answer> answer here "
    "</answer>.<｜User｜>"
)
ASSISTANT_DEEPSEEK_R1 = "<｜Assistant｜>"
WITH_STARTER_CODE = (
    "You will use the following starter code to write the solution to the problem and "
    "enclose your code within delimiters."
)
WITHOUT_STARTER_CODE = (
    "Read the inputs from stdin solve the problem and write the answer to stdout (do not "
    "directly test on the sample inputs). Enclose your code within delimiters as follows. "
    "Ensure that when the python program runs, it reads the inputs, runs the algorithm and "
    "writes output to STDOUT."
)
PLACEHOLDER = "# YOUR CODE HERE"


def _code_block(code: str) -> str:
    return f"```python\n{code}\n```\n\n"


def generic_question(question: str, starter_code: str) -> str:
    """The user message of the generic chat style."""
    prompt = f"### Question:\n{question}\n\n"
    if starter_code:
        prompt += f"### Format: {WITH_STARTER_CODE}\n" + _code_block(starter_code)
    else:
        prompt += f"### Format: {WITHOUT_STARTER_CODE}\n" + _code_block(PLACEHOLDER)
    return prompt + "### Answer: (use the provided format with backticks)\n\n"


def deepseek_r1_text(question: str, starter_code: str) -> str:
    """The whole prompt text of the DeepSeekR1 style."""
    prompt = (
        "You will be given a question (problem specification) and will generate a correct "
        "Python program that matches the specification and passes all tests.\n\n"
        f"Question: {question}\n\n"
    )
    if starter_code:
        prompt += f"{WITH_STARTER_CODE}\n" + _code_block(starter_code)
    else:
        prompt += f"{WITHOUT_STARTER_CODE}\n" + _code_block(PLACEHOLDER)
    return SYSTEM_DEEPSEEK_R1 + prompt + ASSISTANT_DEEPSEEK_R1


def livecodebench_messages(style: str, question: str, starter_code: str) -> list[dict[str, str]]:
    """The prompt of one problem in `style` (`livecodebench` or `livecodebench_deepseek_r1`)
    as messages in the processed schema's key order; `question` is the statement as the
    row gives it (not stripped), `starter_code` its starter code ("" for none)."""
    if style == GENERIC:
        return [
            {"content": SYSTEM_GENERIC, "role": "system"},
            {"content": generic_question(question, starter_code), "role": "user"},
        ]
    if style == DEEPSEEK_R1:
        return [{"content": deepseek_r1_text(question, starter_code), "role": TEXT_ROLE}]
    raise ValueError(f"no LiveCodeBench prompt style {style!r}; choose {GENERIC} or {DEEPSEEK_R1}")


GENERIC = "livecodebench"
DEEPSEEK_R1 = "livecodebench_deepseek_r1"
STYLES = (GENERIC, DEEPSEEK_R1)
# The styles whose prompts are texts for the model as they are (`TEXT_ROLE`), not messages
# for its chat template: an evaluation renders them so, training's chat template cannot.
TEXT_STYLES = (DEEPSEEK_R1,)
