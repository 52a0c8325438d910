"""The judge image as it is deployed: every sandbox layer under the least privileges the docs
give (the engine's default seccomp profile kept), and one line naming what a container
without them lacks (docs/images.md). Run by `CODEFU_JUDGE_TESTS=image nox -s judge-tests`.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tools import images

# conftest.py's `run_image`: (options, command) → the finished container run.
RunImage = Callable[[Sequence[str], Sequence[str]], subprocess.CompletedProcess[str]]

pytestmark = pytest.mark.slow

# What a judge container judges beside a + b (AC) and a - b (WA): name → (language, source,
# the verdict it must get) on the test "1 2" → "3" with 1 s and 64 MiB.
PROGRAMS: dict[str, tuple[str, str, str]] = {
    "ce": ("cpp", "int main() { this is not c++ }\n", "CE"),
    "tle": ("cpp", "int main(){volatile unsigned long x=0;for(;;)x=x+1;}\n", "TLE"),
    # 512 MiB touched page by page against the 64 MiB cap: the memory cgroup stops it.
    "mle": (
        "cpp",
        "#include <cstdlib>\n#include <cstring>\n"
        "int main(){for(int i=0;i<64;i++){char*p=(char*)malloc(8<<20);memset(p,1,8<<20);}"
        "return 0;}\n",
        "MLE",
    ),
    "fork": ("cpp", "#include <unistd.h>\nint main(){for(;;)fork();}\n", "SV"),
    "socket": (
        "cpp",
        "#include <sys/socket.h>\nint main(){return socket(AF_INET,SOCK_STREAM,0)<0;}\n",
        "SV",
    ),
    "py-ac": ("python", "a, b = map(int, input().split())\nprint(a + b)\n", "AC"),
    "py-read": ("python", "print(open('/etc/shadow').read())\n", "RE"),
}
JUDGE_SCRIPT = """
import json, sys
from codefu_sandbox import Judge, Limits, TestCase
judge = Judge()
out = {"isolation": judge.isolation}
for name, (language, source, _) in json.loads(sys.argv[1]).items():
    report = judge.judge(source, [TestCase("1 2\\n", "3\\n")], Limits(1.0, 64 << 20),
                         language=language)
    out[name] = report.verdict.value
print(json.dumps(out))
"""


def test_every_layer_works_under_the_least_privileges(
    run_image: RunImage, cgroup: Path, sum_cpp: str
) -> None:
    from codefu_sandbox.isolation import landlock_abi  # the host's kernel is the container's

    programs = {
        "ac": ("cpp", sum_cpp, "AC"),
        "wa": ("cpp", sum_cpp.replace("a+b", "a-b"), "WA"),
        **PROGRAMS,
    }
    command = ["python", "-c", JUDGE_SCRIPT, json.dumps(programs)]
    done = run_image(images.judge_container_args(cgroup), command)
    assert done.returncode == 0, done.stderr[-4000:]
    got = json.loads(done.stdout.splitlines()[-1])
    assert got.pop("isolation") == f"rlimits+cgroup+uid+seccomp+landlock-v{landlock_abi()}+ipcns"
    assert got == {name: verdict for name, (_, _, verdict) in programs.items()}


# What a container lacks → the words its refusal must name.
REFUSALS = {
    "SYS_ADMIN": ["ipcns: ", "CAP_SYS_ADMIN", "--cap-add SYS_ADMIN"],
    "cgroup": ["cgroup: ", "memory cgroup directory of its own"],
    "both": ["cgroup, ipcns layers", "CAP_SYS_ADMIN"],
}


@pytest.mark.parametrize("dropped", REFUSALS)
def test_a_container_without_a_privilege_refuses_in_one_line_naming_it(
    run_image: RunImage, cgroup: Path, sum_cpp: str, tmp_path: Path, dropped: str
) -> None:
    args = images.judge_container_args(cgroup)
    if dropped in ("SYS_ADMIN", "both"):
        args.remove("--cap-add")
        args.remove("SYS_ADMIN")
    if dropped in ("cgroup", "both"):
        volume = args.index("-v")
        del args[volume : volume + 2]
    (tmp_path / "a.cpp").write_text(sum_cpp)
    (tmp_path / "tests.json").write_text(json.dumps({"input": ["1 2\n"], "output": ["3\n"]}))
    done = run_image(
        [*args, "-v", f"{tmp_path}:/work:ro"],
        ["codefu-judge", "/work/a.cpp", "--tests", "/work/tests.json", "--time-limit", "1",
         "--memory-limit", "64M"],
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("codefu-judge: cannot judge on this host: CODEFU_SANDBOX_REQUIRE")
    for words in REFUSALS[dropped]:
        assert words in line
