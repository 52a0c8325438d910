"""Grades this folder's answers (generations.json) to its problems (problems.jsonl) with
LiveCodeBench's own code, and writes what it gave into lcb_verdicts.json: per problem its
prompts for its OpenAIChat and DeepSeekR1 styles (`format_prompt_generation`), the code its
`extract_code` takes from each answer, and its grader's results and metadata per answer
(`codegen_metrics`, timeout 6 s, as its runner calls it). Nothing of LiveCodeBench is copied
here: this script imports a checkout of it.

Run in a checkout of LiveCodeBench (its prompts open files relative to it), with a Python
that has what its grader imports (numpy, tqdm, datasets), outside this repository:

    cd /tmp/lcb-src && /tmp/lcb-venv/bin/python \
        <repo>/packages/trainer/tests/evaluation/lcb_parity/run_livecodebench.py \
        <repo>/packages/trainer/tests/evaluation/lcb_parity COMMIT

COMMIT is the checkout's commit, recorded with the verdicts.
"""

import datetime
import json
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

from lcb_runner.benchmarks.code_generation import CodeGenerationProblem
from lcb_runner.evaluation.compute_code_generation_metrics import codegen_metrics
from lcb_runner.lm_styles import LMStyle
from lcb_runner.prompts.code_generation import format_prompt_generation
from lcb_runner.utils.extraction_utils import extract_code


def main() -> None:
    folder, commit = Path(sys.argv[1]), sys.argv[2]
    rows = [json.loads(line) for line in (folder / "problems.jsonl").read_text().splitlines()]
    answers = {g["question_id"]: g for g in json.loads((folder / "generations.json").read_text())}
    problems = []
    for row in rows:
        problem = CodeGenerationProblem(**row)
        outputs = answers[problem.question_id]["output_list"]
        codes = [extract_code(o, LMStyle.OpenAIChat) for o in outputs]
        assert codes == [extract_code(o, LMStyle.DeepSeekR1) for o in outputs]
        _, results, metadata = codegen_metrics(
            [problem.get_evaluation_sample()], [codes], k_list=[1], num_process_evaluate=2
        )
        problems.append(
            {
                "question_id": problem.question_id,
                "prompts": {
                    "generic": format_prompt_generation(problem, LMStyle.OpenAIChat),
                    "deepseek_r1": format_prompt_generation(problem, LMStyle.DeepSeekR1),
                },
                "code_list": codes,
                "results": results[0],
                "graded_list": [all(r is True or r > 0 for r in res) for res in results[0]],
                "metadata": [json.loads(m) for m in metadata[0]],
            }
        )
    record = {
        "livecodebench": {
            "repository": "LiveCodeBench/LiveCodeBench",
            "commit": commit,
            "python": platform.python_version(),
            "graded_on": datetime.date.today().isoformat(),
            "how": "run_livecodebench.py: its extract_code (OpenAIChat and DeepSeekR1 styles), "
            "its codegen_metrics with timeout 6",
        },
        "problems": problems,
    }
    (folder / "lcb_verdicts.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"{sum(len(p['code_list']) for p in problems)} answers graded")


if __name__ == "__main__":
    main()
