"""Small synthetic problems and C++ responses with known verdicts, for reward tests."""

from __future__ import annotations

from typing import Any

from codefu_sandbox import CheckerConfig, GraderConfig, JudgeRequest, Limits
from codefu_sandbox.request import request_for

SUM_PROGRAM = (
    "#include <bits/stdc++.h>\n"
    "int main() { long long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n"
)
DIFF_PROGRAM = (  # wrong except when b == 0
    "#include <bits/stdc++.h>\n"
    "int main() { long long a, b; std::cin >> a >> b; std::cout << a - b << '\\n'; }\n"
)
PY_SUM_PROGRAM = "a, b = map(int, input().split())\nprint(a + b)\n"
# Burns 0.4 s of CPU (measured by the process itself), then prints a + b.
PY_BURN_PROGRAM = "import time\nwhile time.process_time() < 0.4:\n    pass\n" + PY_SUM_PROGRAM
COMPILE_ERROR_PROGRAM = "#include <bits/stdc++.h>\nint main() { this is not c++ }\n"
SLEEP_PROGRAM = (
    "#include <bits/stdc++.h>\n#include <unistd.h>\nint main() { for (;;) sleep(1000); }\n"
)
SPIN_PROGRAM = "int main() { volatile unsigned long x = 0; for (;;) x = x + 1; }\n"
# Busy for about `ms` milliseconds of CPU, then answers a + b correctly.
SLOW_SUM_PROGRAM = (
    "#include <bits/stdc++.h>\n"
    "int main() { auto t = std::clock(); volatile unsigned long x = 0;\n"
    "  while (std::clock() - t < CLOCKS_PER_SEC / 4) x = x + 1;\n"
    "  long long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n"
)


def sum_ground_truth(
    name: str = "sum", n_private: int = 4, seconds: float = 1.0, public: int = 1
) -> dict[str, Any]:
    """A processed-row ground truth for 'print a + b'; test 0 has b == 0."""
    pairs = [(i * 7, 0 if i == 0 else i + 1) for i in range(n_private)]
    return {
        "name": name,
        "cf_rating": 800,
        "time_limit": {"seconds": seconds, "nanos": 0},
        "memory_limit_bytes": 256 * 1024 * 1024,
        "public_tests": {"input": ["1 2\n"] * public, "output": ["3\n"] * public},
        "private_tests": {
            "input": [f"{a} {b}\n" for a, b in pairs],
            "output": [f"{a + b}\n" for a, b in pairs],
        },
    }


def respond(code: str, tag: str = "cpp") -> str:
    """A model-like response: reasoning, then the answer in a fenced block."""
    draft = "```cpp\nint main() {}\n```"
    return f"<think>\nLet me think.\n{draft}\n</think>\nHere:\n```{tag}\n{code}```\n"


def cpp_request(checker: CheckerConfig | None = None, tests: int = 1) -> JudgeRequest:
    """A request for a C++ answer: 1 s and 256 MiB per test, `checker` (default
    codecontests), the default grader."""
    return request_for(
        Limits(1.0, 1 << 28),
        tests,
        checker=checker or CheckerConfig("codecontests"),
        grader=GraderConfig(),
        time_factors={},
    )
