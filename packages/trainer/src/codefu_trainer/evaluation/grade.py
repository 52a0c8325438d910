"""`codefu-eval grade`: generations made elsewhere (vLLM, SGLang, an API, LiveCodeBench's own
runner) judged by our sandbox under LiveCodeBench's protocol, with its verdicts and pass@k.

The generations file is one of:
- LiveCodeBench's custom output (`--custom_output_file`): a JSON list of
  `{"question_id", "code_list": [code, …]}`, the code judged as it is;
- LiveCodeBench's saved generations: a JSON list of `{"question_id", "output_list": [raw
  output, …], …}`, each output's code taken by the evaluation's extraction
  (`reward.extraction`, LiveCodeBench's `extract_code` under the protocol);
- JSONL, one `{"question_id", "response"}` per line, a question's lines its samples, each
  response's code taken the same way.

Each question must be one of the problems the data files hold (in the window and release,
when given); a file that is not one of these shapes, a row without a question_id or with an
answer that is not text, a question given twice (JSON), or one the data lacks ends in one
line naming the row, and no result is written (the shape is checked first, the questions
once the data is prepared: that prepared folder stays). The results go to one folder,
written whole:
`samples.jsonl` (one line per answer, as an evaluation's), `summary.json` and its table
(pass@k per difficulty and platform, over the k every problem has samples for, as
LiveCodeBench computes it), and `lcb_eval_all.json`, LiveCodeBench's per-problem shape
(`question_id`, `platform`, `difficulty`, `contest_date`, `output_list`, `code_list`,
`graded_list`, `pass@1`, `metadata`: its error code and message per answer, our verdict
beside them) that its `compute_scores.py` reads.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codefu_sandbox import Verdict
from codefu_trainer.evaluation.config import EvalConfig
from codefu_trainer.evaluation.prepared import date_window, release_record, with_prepared_data
from codefu_trainer.evaluation.problems import (
    EvalProblem,
    absent_record,
    load_problems,
    problem_limits,
)
from codefu_trainer.evaluation.run import judged_record
from codefu_trainer.evaluation.store import SAMPLES_FILE, SUMMARY_FILE
from codefu_trainer.evaluation.summary import summarize
from codefu_trainer.run.prepared_data import BadInputError

Log = Callable[[str], None]
LCB_FILE = "lcb_eval_all.json"
# LiveCodeBench's error codes of a failed answer (its testing_util.py), by our verdict:
# a wrong answer, a time limit, and the rest, which it reports as a runtime error or an
# error during testing (a program that does not compile or defines no such function).
WRONG_ANSWER, TIME_LIMIT, RUNTIME_ERROR = -2, -3, -4
LCB_CODES = {str(Verdict.WA): WRONG_ANSWER, str(Verdict.TLE): TIME_LIMIT}
LCB_MESSAGES = {
    WRONG_ANSWER: "Wrong Answer",
    TIME_LIMIT: "Time Limit Exceeded",
    RUNTIME_ERROR: "Runtime Error",
}


@dataclass(frozen=True)
class Generation:
    """A question's answers as the file gives them: raw responses (their code extracted) or
    code (judged as it is), and where in the file they are (a row, or JSONL lines)."""

    question_id: str
    texts: list[str]
    raw: bool
    where: str


def _bad(path: Path, where: str, what: str) -> BadInputError:
    return BadInputError(f"--generations {path}: {where}: {what}")


def _question_id(row: Any, path: Path, where: str) -> str:
    if not isinstance(row, dict):
        raise _bad(path, where, f"a {type(row).__name__}, not an object with a question_id")
    qid = row.get("question_id")
    if not isinstance(qid, str | int) or isinstance(qid, bool) or not str(qid).strip():
        raise _bad(path, where, "no question_id")
    return str(qid)


def _texts(row: dict[str, Any], key: str, path: Path, where: str) -> list[str]:
    texts = row[key]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise _bad(path, where, f"{key} is not a list of texts")
    if not texts:
        raise _bad(path, where, f"{key} is empty")
    return texts


def _from_json(rows: Any, path: Path) -> list[Generation]:
    if not isinstance(rows, list) or not rows:
        raise _bad(path, "the file", "not a non-empty JSON list of {question_id, code_list}")
    found: dict[str, Generation] = {}
    for n, row in enumerate(rows, start=1):
        where = f"row {n}"
        qid = _question_id(row, path, where)
        where = f"row {n} ({qid})"
        if "output_list" in row:
            generation = Generation(qid, _texts(row, "output_list", path, where), True, where)
        elif "code_list" in row:
            generation = Generation(qid, _texts(row, "code_list", path, where), False, where)
        else:
            raise _bad(path, where, "neither code_list nor output_list")
        if qid in found:
            raise _bad(path, where, f"question {qid} again (first: {found[qid].where})")
        found[qid] = generation
    return list(found.values())


def _from_jsonl(text: str, path: Path) -> list[Generation]:
    found: dict[str, list[tuple[int, str]]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {n}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise _bad(path, where, f"not JSON ({exc})") from None
        qid = _question_id(row, path, where)
        if not isinstance(row.get("response"), str):
            raise _bad(path, f"line {n} ({qid})", "response is not a text")
        found.setdefault(qid, []).append((n, row["response"]))
    if not found:
        raise _bad(path, "the file", "no {question_id, response} line")
    return [
        Generation(qid, [t for _, t in lines], True, f"lines {', '.join(str(n) for n, _ in lines)}")
        for qid, lines in found.items()
    ]


def read_generations(path: Path) -> list[Generation]:
    """The generations of a file in one of the shapes the module docstring lists;
    BadInputError naming the row for anything else."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"--generations {path}: cannot read it ({exc})") from None
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except ValueError as exc:
            raise _bad(path, "the file", f"not JSON ({exc})") from None
        return _from_json(rows, path)
    return _from_jsonl(text, path)


@dataclass
class GradeOutcome:
    """Where the results are and the summary."""

    out_dir: Path
    summary: dict[str, Any]


def lcb_metadata(record: dict[str, Any]) -> dict[str, Any]:
    """LiveCodeBench's metadata of one answer (its error code and message, or its execution
    time), with our verdict beside them."""
    if record["correct"]:
        return {"execution time": record["run_seconds"], "verdict": record["verdict"]}
    code = LCB_CODES.get(record["verdict"], RUNTIME_ERROR)
    return {"error_code": code, "error_message": LCB_MESSAGES[code], "verdict": record["verdict"]}


def lcb_eval_all(
    problems: dict[str, EvalProblem], generations: Sequence[Generation], records: list[dict]
) -> list[dict[str, Any]]:
    """LiveCodeBench's per-problem results (its `_eval_all.json`), by question_id."""
    by_question: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_question.setdefault(record["problem"], []).append(record)
    out = []
    for generation in sorted(generations, key=lambda g: g.question_id):
        problem, answers = problems[generation.question_id], by_question[generation.question_id]
        graded = [bool(r["correct"]) for r in answers]
        out.append(
            {
                "question_id": generation.question_id,
                "platform": problem.platform,
                "difficulty": problem.difficulty,
                "contest_date": problem.contest_date,
                "output_list": list(generation.texts),
                "code_list": [r["code"] for r in answers],
                "graded_list": graded,
                "pass@1": graded.count(True) / len(graded),
                "metadata": [json.dumps(lcb_metadata(r)) for r in answers],
            }
        )
    return out


def _code(text: str, raw: bool, cfg: EvalConfig) -> str:
    """The code judged for one answer: a raw response's by the evaluation's extraction."""
    from codefu_trainer.reward.extract import answer_for

    if not raw:
        return text
    found = answer_for(text, tuple(cfg.reward.languages), cfg.reward.extraction)
    return found.code if found is not None else ""


def _judge(cfg: EvalConfig, codes: list[str], truths: list[str]) -> list[Any]:
    from codefu_trainer.reward.config import Extraction
    from codefu_trainer.reward.service import RewardService

    service = RewardService(dataclasses.replace(cfg.reward, extraction=Extraction.none), local=True)
    try:
        return service.score_detailed(codes, truths)
    finally:
        service.close()


def _write(out: Path, files: dict[str, str]) -> None:
    """The files into `out`, whole: written beside it, then put in its place."""
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name, text in files.items():
        (staging / name).write_text(text, encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    staging.replace(out)


def default_out(cfg: EvalConfig, path: Path, data_dir: Path) -> Path:
    """`<eval.root_dir>/eval/grade/<generations file>_<digest of it, the data and the rules>`."""
    h = hashlib.sha256(path.read_bytes())
    h.update(str(data_dir).encode())
    h.update(json.dumps(dataclasses.asdict(cfg.reward), sort_keys=True, default=str).encode())
    root = Path(cfg.eval.root_dir).expanduser().resolve()
    return root / "eval" / "grade" / f"{path.stem}_{h.hexdigest()[:8]}"


def grade(
    cfg: EvalConfig,
    generations_path: Path,
    generations: Sequence[Generation],
    out: Path | None = None,
    log: Log = print,
) -> GradeOutcome:
    """Judge `generations` (`read_generations` of `generations_path`) against the problems
    of `cfg.data.source`, prepared as the evaluation prepares it; write the results (module
    docstring) into `out`."""
    cfg = with_prepared_data(cfg, log)
    problems = {p.name: p for p in load_problems(cfg, None)}
    for generation in generations:
        if generation.question_id not in problems:
            raise _bad(
                generations_path,
                generation.where,
                f"question {generation.question_id} is not among the problems of "
                f"data.source={cfg.data.source} (in its release and window, if given)",
            )
    order = {name: n for n, name in enumerate(problems)}  # the data's: tier by tier
    generations = sorted(generations, key=lambda g: order[g.question_id])
    unanswered = sorted(set(problems) - {g.question_id for g in generations})
    if unanswered:
        log(
            f"codefu-eval: {len(unanswered)} problems of the data have no generations and are "
            f"not counted ({', '.join(unanswered[:5])}{', …' if len(unanswered) > 5 else ''})"
        )
    units = [(g, j, text) for g in generations for j, text in enumerate(g.texts)]
    codes = [_code(text, g.raw, cfg) for g, _, text in units]
    log(f"codefu-eval: judging {len(units)} answers to {len(generations)} problems")
    scored = _judge(cfg, codes, [problems[g.question_id].ground_truth for g, _, _ in units])
    records = []
    for (g, j, text), code, s in zip(units, codes, scored, strict=True):
        records.append(
            {
                **judged_record(problems[g.question_id], j, s.result),
                "run_seconds": s.result.run_seconds,
                "response_tokens": 0,
                "response": text,
                "code": code,
            }
        )
    least, most = min(len(g.texts) for g in generations), max(len(g.texts) for g in generations)
    ks = sorted(k for k in set(cfg.eval.k) if k <= least) or [1]
    graded = [problems[g.question_id] for g in generations]
    summary = summarize(
        records,
        ks,
        least if least == most else f"{least} to {most}",
        "generations",
        {"generations": str(generations_path.resolve()), "eval.protocol": cfg.eval.protocol},
        protocol=cfg.eval.protocol,
        date_window=date_window(Path(cfg.data.out_dir)),
        limits=problem_limits(graded),
        release=release_record(cfg),
        absent=absent_record(cfg),
    )
    out = out or default_out(cfg, generations_path, Path(cfg.data.out_dir))
    _write(
        out,
        {
            SAMPLES_FILE: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
            SUMMARY_FILE: json.dumps(summary, indent=2) + "\n",
            LCB_FILE: json.dumps(lcb_eval_all(problems, generations, records), indent=2) + "\n",
        },
    )
    return GradeOutcome(out, summary)
