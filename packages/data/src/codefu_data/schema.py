"""Arrow schemas: raw CodeContests rows (input), the problem columns every source format
gives (`PROBLEM_SCHEMA`: the raw ones and a few more), and processed veRL rows (output).

The output schema is the CodeFu reference parquet's (``codefu_easy``) field for field,
including struct field order and types, plus an ``extra_info`` column and the ground
truth's ``judging_rules`` (docs/ARCHITECTURE.md, "Processed dataset").
"""

from __future__ import annotations

import pyarrow as pa

from codefu_sandbox.checkers import PROGRAM, param_types

TESTS_TYPE = pa.struct([("input", pa.list_(pa.string())), ("output", pa.list_(pa.string()))])
SOLUTIONS_TYPE = pa.struct(
    [("language", pa.list_(pa.int64())), ("solution", pa.list_(pa.string()))]
)
TIME_LIMIT_TYPE = pa.struct([("seconds", pa.int64()), ("nanos", pa.int64())])

# Every column of Hugging Face `deepmind/code_contests`, with the types its parquet shards use.
RAW_SCHEMA = pa.schema(
    [
        ("name", pa.string()),
        ("description", pa.string()),
        ("public_tests", TESTS_TYPE),
        ("private_tests", TESTS_TYPE),
        ("generated_tests", TESTS_TYPE),
        ("source", pa.int64()),
        ("difficulty", pa.int64()),
        ("solutions", SOLUTIONS_TYPE),
        ("incorrect_solutions", SOLUTIONS_TYPE),
        ("cf_contest_id", pa.int64()),
        ("cf_index", pa.string()),
        ("cf_points", pa.float32()),
        ("cf_rating", pa.int32()),
        ("cf_tags", pa.list_(pa.string())),
        ("is_description_translated", pa.bool_()),
        ("untranslated_description", pa.string()),
        ("time_limit", TIME_LIMIT_TYPE),
        ("memory_limit_bytes", pa.int64()),
        ("input_file", pa.string()),
        ("output_file", pa.string()),
    ]
)

OUT_TESTS_TYPE = TESTS_TYPE
# How a problem's tests are run and compared (docs/ARCHITECTURE.md, "Ground truth"; null:
# the default grader): the grader's name and its parameters as the grader defines them,
# their JSON text (`codefu_sandbox.GraderConfig.stored`), so a grader with parameters of
# its own needs no change here.
GRADER_TYPE = pa.struct([("name", pa.string()), ("params", pa.string())])


# A problem's checker program, validated by prepare (null: none), stored as its
# codefu-sandbox configuration's own `CheckerConfig.to_dict()` (`checkers.program.config`):
# the program checker's parameters as fields, all but `testlib` (prepare inlines testlib.h
# into the source, so no path of the preparing machine is stored). Today's fields: source,
# language, time_seconds, memory_bytes. A comparison its source format chooses
# (`livecodebench`) has null params.
_ARROW_TYPES = {str: pa.string(), float: pa.float64(), int: pa.int64(), bool: pa.bool_()}
CHECKER_PARAMS_TYPE = pa.struct(
    [(name, _ARROW_TYPES[kind]) for name, kind in param_types(PROGRAM).items() if name != "testlib"]
)
CHECKER_TYPE = pa.struct([("name", pa.string()), ("params", CHECKER_PARAMS_TYPE)])

# The problem columns a source format gives beside the raw ones (codefu_data.formats):
# where the problem comes from, its difficulty label ("easy", "medium_hard", …; null: none),
# its contest date (ISO text; null: unknown), the platform that set it ("leetcode",
# "atcoder", "codeforces", as LiveCodeBench names them; null: not stated), the starter code
# its prompt shows (null: none), how its tests run (`GRADER_TYPE`) and the comparison its
# source fixes (`CHECKER_TYPE`).
PROBLEM_EXTRA = (
    pa.field("data_source", pa.string()),
    pa.field("difficulty_label", pa.string()),
    pa.field("contest_date", pa.string()),
    pa.field("platform", pa.string()),
    pa.field("starter_code", pa.string()),
    pa.field("grader", GRADER_TYPE),
    pa.field("source_checker", CHECKER_TYPE),
)
PROBLEM_SCHEMA = pa.schema([*RAW_SCHEMA, *PROBLEM_EXTRA])

# Columns prepare needs; everything else (generated tests, incorrect solutions, …) is never read.
REQUIRED_COLUMNS = (
    "name",
    "description",
    "public_tests",
    "private_tests",
    "source",
    "cf_rating",
    "time_limit",
    "memory_limit_bytes",
    *(f.name for f in PROBLEM_EXTRA),
)
# Read only when validating with the accepted solutions.
VALIDATION_COLUMNS = ("solutions",)

CODEFORCES_SOURCE = 2  # CodeContests `source` enum: 2 = Codeforces
CPP_LANGUAGE = 2  # CodeContests solution `language` enum: 2 = C++
PYTHON3_LANGUAGE = 3  # 3 = PYTHON3 (1 is Python 2, which the judge does not run)
# CodeContests' solution `language` enum: code → label. A judge language claims the labels
# it is (`codefu_sandbox.languages.Language.aliases`: C++ "CPP", Python 3 "PYTHON3").
CODECONTESTS_LANGUAGES = {
    0: "UNKNOWN_LANGUAGE",
    1: "PYTHON",
    CPP_LANGUAGE: "CPP",
    PYTHON3_LANGUAGE: "PYTHON3",
    4: "JAVA",
}

# How the statement relaxes the comparison (codefu_sandbox.rules.JudgingRules).
JUDGING_RULES_TYPE = pa.struct(
    [
        ("any_case_words", pa.list_(pa.string())),
        ("float_tolerance", pa.float64()),
        ("tolerance_mode", pa.string()),
        ("several_answers", pa.bool_()),
        ("any_order", pa.string()),
    ]
)
# The CodeFu reference's ground truth, field for field.
REFERENCE_GROUND_TRUTH_TYPE = pa.struct(
    [
        ("cf_rating", pa.int64()),
        ("memory_limit_bytes", pa.int64()),
        ("name", pa.string()),
        ("private_tests", OUT_TESTS_TYPE),
        ("public_tests", OUT_TESTS_TYPE),
        ("time_limit", pa.struct([("nanos", pa.float64()), ("seconds", pa.float64())])),
    ]
)
# Ours: the reference's fields, then the judging rules (null: judged as the reference is),
# the checker and the grader (null: the standard stdin/stdout grader).
GROUND_TRUTH_TYPE = pa.struct(
    [
        *REFERENCE_GROUND_TRUTH_TYPE,
        ("judging_rules", JUDGING_RULES_TYPE),
        ("checker", CHECKER_TYPE),
        ("grader", GRADER_TYPE),
    ]
)
PROMPT_TYPE = pa.list_(pa.struct([("content", pa.string()), ("role", pa.string())]))
REWARD_MODEL_TYPE = pa.struct([("ground_truth", GROUND_TRUTH_TYPE), ("style", pa.string())])
REFERENCE_REWARD_MODEL_TYPE = pa.struct(
    [("ground_truth", REFERENCE_GROUND_TRUTH_TYPE), ("style", pa.string())]
)
# What an evaluation groups by beside the tier: the problem's difficulty label, platform and
# contest date (each null where its source states none; the problem columns of those names).
EXTRA_INFO_TYPE = pa.struct(
    [
        ("index", pa.int64()),
        ("split", pa.string()),
        ("tier", pa.string()),
        ("name", pa.string()),
        ("difficulty", pa.string()),
        ("platform", pa.string()),
        ("contest_date", pa.string()),
    ]
)
OUTPUT_SCHEMA = pa.schema(
    [
        ("data_source", pa.string()),
        ("prompt", PROMPT_TYPE),
        ("ability", pa.string()),
        ("reward_model", REWARD_MODEL_TYPE),
        ("extra_info", EXTRA_INFO_TYPE),
    ]
)
DATA_SOURCE = "code_contests"  # CodeContests' rows (and veRL rows that name none)
ABILITY = "coding-cp"
