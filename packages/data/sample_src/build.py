"""Build the shipped sample dataset (CodeContests schema, Hugging Face shard layout).

For every problem directory under ``problems/`` this script:

1. compiles every ``*.cpp`` with ``g++ -O2 -std=c++17`` (cached by source hash); Python 3
   solutions (``ref*.py``, ``incorrect*.py``) run with this interpreter;
2. generates the test inputs with the problem's ``gen.py`` (fixed seed);
3. runs ``ref.cpp`` on every input to produce the expected outputs, and checks it stays
   within the problem's time limit;
4. checks that the statement shows every public test (input and output) verbatim;
5. checks that every other accepted solution (``ref*.cpp``, ``ref*.py``) passes every test
   and that every incorrect solution (``incorrect*.cpp``, ``incorrect*.py``) fails at least
   one (WA, RE or TLE);
6. writes ``{train,valid,test}-00000-of-00001.parquet`` with the column schema of
   ``deepmind/code_contests`` (see ``README.md`` next to this file).

Usage::

    python build.py            # rebuild the shards in place
    python build.py --check    # rebuild into a temp dir; verify byte-identity with the shards
    python build.py --only SLUG [--only SLUG ...]   # verify some problems, write nothing

Needs ``g++``, ``pyarrow`` and codefu-sandbox installed (``README.md``).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import importlib.util
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
PROBLEMS = HERE / "problems"
OUT_DIR = HERE.parent / "src" / "codefu_data" / "sample" / "data"
SPLITS = ("train", "valid", "test")
CACHE = Path(
    os.environ.get("CODEFU_SAMPLE_BUILD_CACHE", Path(tempfile.gettempdir()) / "codefu-sample-build")
)
CXX = ["g++", "-O2", "-std=c++17", "-pipe"]
# CodeContests' language enum (0 unknown, 1 Python 2, 2 C++, 3 Python 3, 4 Java) by suffix.
LANGUAGES = {".cpp": 2, ".py": 3}
FLOAT_TOKEN = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+)$")
ROW_GROUP_SIZE = 8  # several row groups per shard, so readers that stream them are exercised

# The column schema of deepmind/code_contests, from the package that reads it.
sys.path.insert(0, str(HERE.parent / "src"))
from codefu_data.schema import RAW_SCHEMA as SCHEMA  # noqa: E402


class BuildError(Exception):
    """A problem failed verification; the message names the problem and what to fix."""


@dataclass
class Problem:
    slug: str
    path: Path
    meta: dict[str, Any]
    tests: dict[str, list[str]] = field(default_factory=dict)
    outputs: dict[str, list[str]] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    @property
    def time_limit(self) -> float:
        """The limit the solutions are judged with (flawed rows store another value)."""
        return float(self.meta.get("judge_time_limit_seconds", self.meta["time_limit_seconds"]))


def load_problems(only: list[str] | None) -> list[Problem]:
    """Read every ``problems/*/meta.json`` (sorted by directory name)."""
    out = []
    for d in sorted(p for p in PROBLEMS.iterdir() if p.is_dir()):
        if only and d.name not in only:
            continue
        meta = json.loads((d / "meta.json").read_text())
        if meta.get("split") not in SPLITS:
            raise BuildError(f"{d.name}: meta.json split must be one of {SPLITS}")
        out.append(Problem(d.name, d, meta))
    if only and len(out) != len(set(only)):
        raise BuildError(f"unknown problem in --only {only}; see {PROBLEMS}")
    return out


def compile_cpp(src: Path) -> Path:
    """Compile ``src`` once per source hash into the build cache and return the binary."""
    digest = hashlib.sha256(src.read_bytes() + " ".join(CXX).encode()).hexdigest()[:20]
    exe = CACHE / f"{digest}.bin"
    if exe.exists():
        return exe
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
    r = subprocess.run(
        [*CXX, "-o", str(tmp), str(src)], capture_output=True, text=True, check=False
    )
    if r.returncode != 0:
        raise BuildError(f"{src}: compilation failed:\n{r.stderr[-2000:]}")
    tmp.replace(exe)
    return exe


@dataclass
class RunResult:
    stdout: str
    cpu: float
    wall: float
    exit_code: int
    killed: bool


def run_exe(exe: Path, data: str, kill_after: float) -> RunResult:
    """Run ``exe`` (a binary, or a ``.py`` file run by this interpreter) with ``data`` on stdin;
    measure its CPU time; kill it after ``kill_after`` s."""
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout:
        fin.write(data.encode())
        fin.seek(0)
        start = time.monotonic()
        argv = [sys.executable, "-I", str(exe)] if exe.suffix == ".py" else [str(exe)]
        proc = subprocess.Popen(argv, stdin=fin, stdout=fout, stderr=subprocess.DEVNULL)
        killed = threading.Event()

        def _kill() -> None:
            killed.set()
            proc.kill()

        timer = threading.Timer(kill_after, _kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - start
        fout.seek(0)
        text = fout.read().decode(errors="replace")
    return RunResult(text, usage.ru_utime + usage.ru_stime, wall, proc.returncode, killed.is_set())


def _tokens_equal(expected: str, got: str) -> bool:
    """CodeContests comparison (the reward's default checker): decimal tokens within 1e-6
    abs/rel, others exact."""
    a, b = expected.split(), got.split()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x == y:
            continue
        if not FLOAT_TOKEN.match(x):
            return False
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        if abs(fx - fy) > 1e-6 * max(1.0, abs(fx)):
            return False
    return True


def load_gen(p: Problem) -> Any:
    """Import the problem's ``gen.py`` as a module."""
    spec = importlib.util.spec_from_file_location(
        f"gen_{p.slug.replace('-', '_')}", p.path / "gen.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def normalize(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def build_problem(p: Problem) -> Problem:
    """Generate, run and verify one problem; fills ``p.tests`` and ``p.outputs``."""
    gen = load_gen(p)
    rng = random.Random(zlib.crc32(p.slug.encode()))
    tests = gen.generate(rng)
    p.tests = {k: list(tests.get(k, [])) for k in ("public", "private", "generated")}
    if not p.tests["public"]:
        raise BuildError(f"{p.slug}: gen.py must return at least one public test")
    want_private = p.meta.get("flaw") != "no_private_tests"
    if want_private and not 5 <= len(p.tests["private"]) <= 20:
        raise BuildError(
            f"{p.slug}: gen.py returned {len(p.tests['private'])} private tests; need 5-20"
        )
    checker = getattr(gen, "check", None)
    tl = p.time_limit
    ref = compile_cpp(p.path / "ref.cpp")
    all_inputs = [
        (k, i, s) for k in ("public", "private", "generated") for i, s in enumerate(p.tests[k])
    ]
    outs: dict[str, list[str]] = {k: [""] * len(v) for k, v in p.tests.items()}
    worst = 0.0
    for kind, i, inp in all_inputs:
        r = run_exe(ref, inp, kill_after=max(3 * tl, tl + 2))
        if r.exit_code != 0 or r.killed:
            raise BuildError(
                f"{p.slug}: ref.cpp exit {r.exit_code} (killed={r.killed}) on {kind} #{i}"
            )
        if r.cpu > tl:
            raise BuildError(
                f"{p.slug}: ref.cpp took {r.cpu:.2f}s CPU > limit {tl}s on {kind} #{i}"
            )
        if checker is not None and not checker(inp, r.stdout):
            raise BuildError(f"{p.slug}: ref.cpp output rejected by gen.check on {kind} #{i}")
        worst = max(worst, r.cpu)
        outs[kind][i] = r.stdout
    p.outputs = outs
    p.log.append(f"ref max cpu {worst:.3f}s / limit {tl}s")
    # The statement must show every public example verbatim.
    desc = normalize((p.path / "statement.md").read_text())
    if p.meta.get("flaw") != "empty_description":
        for i, (inp, out) in enumerate(zip(p.tests["public"], outs["public"], strict=True)):
            if normalize(inp) not in desc or normalize(out) not in desc:
                raise BuildError(
                    f"{p.slug}: public test #{i} (input or ref output) is not in statement.md;"
                    f" ref output was:\n{out}"
                )
    for src in [*sorted(p.path.glob("*.cpp")), *_programs(p.path, "*.py")]:
        if src.name == "ref.cpp":
            continue
        exe = compile_cpp(src) if src.suffix == ".cpp" else src
        accepted = src.name.startswith("ref")
        if not accepted and not src.name.startswith("incorrect"):
            raise BuildError(f"{p.slug}: {src.name}: name C++ files ref*.cpp or incorrect*.cpp")
        failure = None
        for kind, i, inp in all_inputs:
            expected = outs[kind][i]
            r = run_exe(exe, inp, kill_after=max(2 * tl, tl + 1))
            if r.killed or r.cpu > tl:
                failure = f"TLE ({r.cpu:.2f}s cpu) on {kind} #{i}"
            elif r.exit_code != 0:
                failure = f"RE (exit {r.exit_code}) on {kind} #{i}"
            elif not (checker(inp, r.stdout) if checker else _tokens_equal(expected, r.stdout)):
                failure = f"WA on {kind} #{i}"
            if failure:
                break
        if accepted and failure:
            raise BuildError(f"{p.slug}: accepted solution {src.name} fails: {failure}")
        if not accepted and not failure:
            raise BuildError(
                f"{p.slug}: incorrect solution {src.name} passes every test; add a test it fails"
            )
        p.log.append(f"{src.name}: {'AC' if accepted else failure}")
    return p


def _tests(inputs: list[str], outputs: list[str]) -> dict[str, list[str]]:
    return {"input": inputs, "output": outputs}


def _programs(folder: Path, pattern: str) -> list[Path]:
    """The solutions matching ``pattern`` (``gen.py`` is the generator, not a solution)."""
    return sorted(q for q in folder.glob(pattern) if q.name.startswith(("ref", "incorrect")))


def _solutions(folder: Path, prefix: str) -> dict[str, list[Any]]:
    """The ``prefix*`` programs: C++ first, then Python 3, each in name order."""
    paths = [*_programs(folder, f"{prefix}*.cpp"), *_programs(folder, f"{prefix}*.py")]
    return {
        "language": [LANGUAGES[q.suffix] for q in paths],
        "solution": [q.read_text() for q in paths],
    }


def to_rows(p: Problem) -> list[tuple[str, dict[str, Any]]]:
    """The dataset row(s) of a verified problem, each with its split."""
    m = p.meta
    desc = (p.path / "statement.md").read_text().strip() + "\n"
    if m.get("flaw") == "empty_description":
        desc = ""
    private = _tests(p.tests["private"], p.outputs["private"])
    if m.get("flaw") == "no_private_tests":
        private = _tests([], [])
    tl = m["time_limit_seconds"]
    time_limit = None if tl is None else {"seconds": int(tl), "nanos": round((tl - int(tl)) * 1e9)}
    source = int(m["source"])
    index = m.get("cf_index", "")
    difficulty = m.get("difficulty")
    if difficulty is None:  # CodeContests: Codeforces problems use 7 + index letter (A=7, B=8, ...)
        difficulty = 7 + ord(index[0]) - ord("A") if source == 2 and index else 0
    row = {
        "name": m["name"],
        "description": desc,
        "public_tests": _tests(p.tests["public"], p.outputs["public"]),
        "private_tests": private,
        "generated_tests": _tests(p.tests["generated"], p.outputs["generated"]),
        "source": source,
        "difficulty": int(difficulty),
        "solutions": _solutions(p.path, "ref"),
        "incorrect_solutions": _solutions(p.path, "incorrect"),
        "cf_contest_id": int(m.get("cf_contest_id", 0)),
        "cf_index": index,
        "cf_points": float(m.get("cf_points", 0.0)),
        "cf_rating": int(m.get("cf_rating", 0)),
        "cf_tags": list(m.get("tags", [])),
        "is_description_translated": False,
        "untranslated_description": "",
        "time_limit": time_limit,
        "memory_limit_bytes": int(m["memory_limit_bytes"]),
        "input_file": "",
        "output_file": "",
    }
    rows = [(m["split"], row)]
    dup = m.get("duplicate_as")
    if dup:  # deliberate cross-split duplicate: same statement and tests, another name
        rows.append(
            (
                dup["split"],
                {
                    **row,
                    "name": dup["name"],
                    "cf_contest_id": dup["cf_contest_id"],
                    "cf_index": dup["cf_index"],
                },
            )
        )
    return rows


def write_shards(problems: list[Problem], out_dir: Path) -> dict[str, int]:
    """Write one parquet shard per split (rows sorted by name); return row counts."""
    by_split: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
    for p in problems:
        for split, row in to_rows(p):
            by_split[split].append(row)
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split, rows in by_split.items():
        rows.sort(key=lambda r: r["name"])
        table = pa.Table.from_pylist(rows, schema=SCHEMA)
        path = out_dir / f"{split}-00000-of-00001.parquet"
        pq.write_table(
            table,
            path,
            compression="zstd",
            compression_level=9,
            row_group_size=ROW_GROUP_SIZE,
            write_statistics=False,
            store_schema=True,
        )
        counts[split] = len(rows)
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--check",
        action="store_true",
        help="rebuild into a temp dir and verify byte-identity with the committed shards",
    )
    ap.add_argument(
        "--only", action="append", help="verify only this problem (repeatable); writes nothing"
    )
    ap.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    args = ap.parse_args(argv)
    if shutil.which("g++") is None:
        print("error: g++ not found; install it (apt-get install g++)", file=sys.stderr)
        return 2
    problems = load_problems(args.only)
    t0 = time.monotonic()
    errors = []
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        futs = {ex.submit(build_problem, p): p for p in problems}
        for fut in cf.as_completed(futs):
            p = futs[fut]
            try:
                fut.result()
                print(
                    f"ok   {p.slug}: {len(p.tests['public'])} public,"
                    f" {len(p.tests['private'])} private,"
                    f" {len(p.tests['generated'])} generated; " + "; ".join(p.log),
                    flush=True,
                )
            except BuildError as e:
                errors.append(str(e))
                print(f"FAIL {e}", flush=True)
    if errors:
        print(f"\n{len(errors)} problem(s) failed verification; nothing written.", file=sys.stderr)
        return 1
    print(f"verified {len(problems)} problems in {time.monotonic() - t0:.1f}s")
    if args.only:
        return 0
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            counts = write_shards(problems, Path(tmp))
            bad = [
                s
                for s in SPLITS
                if not (OUT_DIR / f"{s}-00000-of-00001.parquet").exists()
                or (Path(tmp) / f"{s}-00000-of-00001.parquet").read_bytes()
                != (OUT_DIR / f"{s}-00000-of-00001.parquet").read_bytes()
            ]
        if bad:
            print(
                f"CHECK FAILED: shards {bad} differ from a fresh build; run build.py, commit.",
                file=sys.stderr,
            )
            return 1
        print(f"check ok: rebuilt shards are byte-identical ({counts})")
        return 0
    counts = write_shards(problems, OUT_DIR)
    size = sum(f.stat().st_size for f in OUT_DIR.glob("*.parquet"))
    print(f"wrote {counts} to {OUT_DIR} ({size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
