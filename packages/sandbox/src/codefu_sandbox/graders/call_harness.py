"""The call grader's harness (`call.py`): the sandboxed interpreter runs this file's text
(`python3 -I -S -B -c <text>`) in the test's folder, next to the program's byte code
(`sol.pyc`), in place of the program. The judge never imports it.

Its standard input: a header line (JSON: `nonce`, the record prefix; `function`, the name
to call; `prelude`, the source run first in the program's module, or null; `seconds`, one
call's CPU time; `wall`, the watchdog's period; `memory`, the memory limit in bytes;
`apps`, whether a first argument that is a dict gets its keys read as integers, as APPS
does; `strict`, whether a result must be JSON data as it is, as LiveCodeBench compares it;
`tests`, how many follow), then one line per test, the JSON array of its arguments.
It reads all of it first, so the program reads only end-of-file.

Its records go to the file that was its stdout; fd 1 is then pointed at stderr, so the
program's own prints never land among them. One line each: `NONCE load CPU WALL PEAK_KIB
KIND PAYLOAD` for loading the program (KIND `ready`, `missing`: no such function,
`raised`, `memory`: MemoryError, or `blocked`), then `NONCE test INDEX CPU WALL PEAK_KIB
KIND PAYLOAD` per test (KIND `value`: PAYLOAD the result as JSON; `raised`, `memory`,
`unserializable`, `inexact`: with `strict`, a result JSON would change (a tuple below the
top level, a dict key that is not a string), `input`: the arguments are not a JSON array,
or `blocked`: PAYLOAD a JSON message). Loading and each call run under a CPU timer
(ITIMER_PROF) whose signal's default action ends the process (the judge sees SIGPROF), and
a wall-clock watchdog (ITIMER_REAL, every `wall` seconds): a period in which the process
got less than `WAITING_SHARE` of a CPU (a computing program gets more even on a host
oversubscribed 20 times) means it is blocked (sleeping, waiting on a lock): it writes a
`blocked` record and ends the process. After a test whose peak memory is over the limit it
stops: the rest need a fresh process to be measured.

The program runs in this process and can write records of its own: the judge trusts none
of this beyond what the program could return itself (docs/security.md).
"""

from __future__ import annotations

import _json  # json's C half: `json` itself imports `re` and more, ~8 ms per answer
import _signal  # the same for `signal` (its enums)
import marshal
import os
import resource
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # never at run time: typing's import is not paid per answer
    from collections.abc import Callable
    from typing import Any

BYTECODE = "sol.pyc"
MODULE = "solution"
WAITING_SHARE = 0.02

# Bound before the program runs: it cannot rebind the harness's own references.
write = os.write
exit_now = os._exit
cpu_clock = time.process_time
wall_clock = time.monotonic
setitimer = _signal.setitimer
ITIMER_PROF = _signal.ITIMER_PROF
ITIMER_REAL = _signal.ITIMER_REAL
ModuleType = type(sys)
CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class Decoding:
    """What `_json.make_scanner` reads: JSON as `json.loads` decodes it by default."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = CONSTANTS.__getitem__


def refuse(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


scan = _json.make_scanner(Decoding())  # type: ignore[arg-type]
make_encoder = _json.make_encoder
encode_ascii = _json.encode_basestring_ascii


def emit(fd: int, *fields: bytes) -> None:
    data = b" ".join(fields) + b"\n"
    while data:
        data = data[write(fd, data) :]


def lifted(function: Callable[[Any], Any], value: Any) -> Any:
    """`function(value)` with no limit on integer digits (a result may be a huge number;
    an interpreter without that limit has none to lift)."""
    if not hasattr(sys, "set_int_max_str_digits"):
        return function(value)
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return function(value)
    finally:
        sys.set_int_max_str_digits(old)


def dumps(value: Any) -> str:
    """`value` as JSON text, as `json.dumps` writes it by default: ASCII (no raw newline),
    NaN and infinities allowed; TypeError or ValueError when it is not JSON data."""
    encode = make_encoder({}, refuse, encode_ascii, None, ": ", ", ", False, False, True)
    return "".join(encode(value, 0))


def loads(line: bytes) -> Any:
    """The JSON value on a line (ValueError when it holds anything else)."""
    text = line.decode().strip()
    try:
        value, end = scan(text, 0)
    except StopIteration:
        raise ValueError(f"not JSON: {text[:60]!r}") from None
    if end != len(text):
        raise ValueError(f"not one JSON value: {text[:60]!r}")
    return value


def message(exc: BaseException) -> bytes:
    """`Type: text` of an exception as a JSON string, short; the type alone when its text
    cannot be had."""
    try:
        text = f"{type(exc).__name__}: {exc}"
    except BaseException:
        text = type(exc).__name__
    return dumps(text[:300]).encode()


def find(scope: dict[str, Any], name: str) -> Callable[..., Any] | None:
    """`Solution().<name>` when the program defines class Solution with it, else the
    module-level callable `name`; None when neither exists."""
    solution = scope.get("Solution")
    if isinstance(solution, type) and hasattr(solution, name):
        return getattr(solution(), name)
    function = scope.get(name)
    return function if callable(function) else None


def apps_arguments(args: list[Any]) -> list[Any]:
    """APPS' reading of JSON's string keys: a first argument that is a dict whose keys all
    read as integers gets integer keys."""
    if args and isinstance(args[0], dict):
        try:
            return [{int(key): value for key, value in args[0].items()}, *args[1:]]
        except ValueError:
            pass
    return args


def inexact(value: Any) -> str | None:
    """What in `value` JSON would change, so that it cannot equal JSON data in Python: a
    tuple (JSON makes it a list), a dict key that is not a string; None when nothing."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            return "a tuple inside the result (only a returned tuple is read as a list)"
        if isinstance(item, list | dict):
            if id(item) in seen:  # a container inside itself: serialising refuses it
                continue
            seen.add(id(item))
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    return f"a dict key of type {type(key).__name__} (JSON's keys are strings)"
            stack.extend(item.values())
    return None


def call(function: Callable[..., Any], args: list[Any], strict: bool) -> tuple[bytes, bytes]:
    """(KIND, PAYLOAD) of one call. `strict`: a returned tuple is read as a list, and a
    result JSON would change anywhere else is `inexact` (LiveCodeBench's comparison)."""
    try:
        result = function(*args)
    except MemoryError:
        return b"memory", b'"MemoryError"'
    except BaseException as exc:
        return b"raised", message(exc)
    try:
        if strict:
            result = list(result) if isinstance(result, tuple) else result
            why = inexact(result)
            if why is not None:
                return b"inexact", dumps(why).encode()
        text: str = lifted(dumps, result)
        return b"value", text.encode()
    except MemoryError:
        return b"memory", b'"MemoryError while serialising the result"'
    except BaseException as exc:
        return b"unserializable", message(exc)


class Watchdog:
    """Times what runs: its CPU timer, and a wall-clock period after which, if the process
    used (almost) no CPU in it, what runs is blocked: it writes the record and ends the
    process (the CPU timer would never fire)."""

    def __init__(self, records: int, nonce: bytes, seconds: float, period: float) -> None:
        self.records, self.nonce = records, nonce
        self.seconds, self.period = seconds, period
        self.record: tuple[bytes, ...] = ()
        self.cpu = self.wall = self.last = 0.0
        _signal.signal(_signal.SIGALRM, self.alarm)

    def start(self, *record: bytes) -> None:
        """Time what runs now; `record` starts its record (`load`, or `test INDEX`)."""
        self.record = record
        self.cpu = self.last = cpu_clock()
        self.wall = wall_clock()
        setitimer(ITIMER_PROF, self.seconds)
        setitimer(ITIMER_REAL, self.period, self.period)

    def stop(self, kind: bytes, payload: bytes) -> int:
        """Stop timing; write the record; the peak memory so far, in KiB."""
        setitimer(ITIMER_PROF, 0)
        setitimer(ITIMER_REAL, 0)
        cpu, wall = cpu_clock() - self.cpu, wall_clock() - self.wall
        peak: int = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        figures = b"%.6f %.6f %d" % (cpu, wall, peak)
        emit(self.records, self.nonce, *self.record, figures, kind, payload)
        return peak

    def alarm(self, signum: int, frame: object) -> None:
        now = cpu_clock()
        if now - self.last >= WAITING_SHARE * self.period:
            self.last = now
            return
        text = f"no CPU used in {self.period:g} s of wall time: blocked or sleeping"
        self.stop(b"blocked", dumps(text).encode())
        exit_now(0)


def load(job: dict[str, Any], watch: Watchdog) -> Callable[..., Any] | None:
    """The function to call, from the program loaded into its module (after the prelude);
    None, after its record, when loading raised."""
    module = ModuleType(MODULE)
    sys.modules[MODULE] = module
    scope = module.__dict__
    watch.start(b"load")
    try:
        if job["prelude"]:
            exec(compile(job["prelude"], "<prelude>", "exec"), scope)
        with open(BYTECODE, "rb") as f:  # noqa: PTH123 (pathlib's import costs ~5 ms)
            code = marshal.loads(f.read()[16:])
        exec(code, scope)
        function = find(scope, job["function"])
    except MemoryError:
        watch.stop(b"memory", b'"MemoryError"')
        return None
    except BaseException as exc:
        watch.stop(b"raised", message(exc))
        return None
    if function is None:
        name = job["function"]
        text = f"the program defines no function {name} and no class Solution with it"
        watch.stop(b"missing", dumps(text).encode())
        return None
    watch.stop(b"ready", b'""')
    return function


def main() -> None:
    head, *lines = sys.stdin.buffer.read().split(b"\n")
    job = loads(head)
    records = os.dup(1)
    os.dup2(2, 1)
    watch = Watchdog(records, job["nonce"].encode(), float(job["seconds"]), float(job["wall"]))
    memory_kib = int(job["memory"]) // 1024
    function = load(job, watch)
    if function is None:
        return
    for index, line in enumerate(lines[: int(job["tests"])]):
        try:
            args = lifted(loads, line)
            if not isinstance(args, list):
                raise ValueError(f"not a JSON array: {line[:60]!r}")
        except ValueError as exc:
            emit(records, watch.nonce, b"test %d 0 0 0 input" % index, message(exc))
            continue
        if job["apps"]:
            args = apps_arguments(args)
        watch.start(b"test", b"%d" % index)
        kind, payload = call(function, args, bool(job.get("strict")))
        if watch.stop(kind, payload) > memory_kib:
            return


def run() -> None:
    """`main`, then the process ends at once: no wait for threads the program left running,
    no atexit handler of its own. Exit 1 when the harness itself failed (the program may
    have broken what it needs), its message on stderr."""
    status = 0
    try:
        main()
    except BaseException as exc:
        status = 1
        write(2, b"\ncall harness: " + message(exc) + b"\n")
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            exit_now(status)


if __name__ == "__main__":  # as `python3 -c`; importing it runs nothing
    run()
