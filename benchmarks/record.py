#!/usr/bin/env python
"""Run a benchmark and keep its output as the latest figures the documentation shows.

    .venv/bin/python benchmarks/record.py NAME -- .venv/bin/python benchmarks/scoring_latency.py [ARGS]

The output goes to the terminal as it comes and, when the command succeeds, replaces
``docs/benchmarks/results/NAME.txt``, which one documentation page includes verbatim: a figure
lives in that file only, never copied by hand into a page. A failed run changes nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks" / "results"


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--" or "/" in argv[0]:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    name, command = argv[0], argv[2:]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        sys.stdout.write(line)
        lines.append(line)
    if process.wait() != 0:
        failed = f"[record] the benchmark failed (exit {process.returncode}): {RESULTS / name}.txt unchanged"
        print(failed, file=sys.stderr)
        return process.returncode
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.txt").write_text("".join(lines))
    print(f"[record] wrote {RESULTS / name}.txt", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
