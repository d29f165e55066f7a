"""How fast the yellow highlighter (``annotate.diff.highlight``) runs, against difflib in the same run.

Times, best of ``--repeats`` rounds of ``timeit`` (each round long enough to last ~0.2 s):

- ``highlight(first, second)`` (tokenising, aligning with moves, cutting both sentences into
  segments) on
  - the longest pair of the demo campaign (``annotate/demo/demo_campaign.jsonl``);
  - a 1,000-character pair: demo sources joined until 1,000 characters, against their
    hypotheses joined the same way (a long paraphrase with edits, swaps and moves);
  - a 1,000-character pair of unrelated word order (the same words shuffled): the worst case,
    with many short common runs to tile;
- the reference: ``difflib.SequenceMatcher(None, words_a, words_b).get_matching_blocks()`` on
  the same, already split, lowercase words (no tokenising, no segments): the standard
  library's in-order word diff.

Prints microseconds per call and the ratio highlight / reference; no assertion.

    .venv/bin/python benchmarks/highlight_speed.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotate.diff import highlight  # noqa: E402

DEMO = ROOT / "annotate" / "demo" / "demo_campaign.jsonl"
LONG = 1000


def demo_pairs() -> list[tuple[str, str]]:
    lines = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(str(line["source"]), str(line["hypothesis"])) for line in lines]


def joined_to(texts: list[str], length: int) -> str:
    """The texts joined by spaces, cut at the last word boundary before ``length`` characters."""
    text = ""
    for piece in texts:
        text = f"{text} {piece}".strip()
        if len(text) >= length:
            break
    return text[:length].rsplit(" ", 1)[0]


def best_microseconds(call: Callable[[], object], repeats: int) -> float:
    timer = timeit.Timer(call)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeats, number=number)) / number * 1e6


def reference(first: str, second: str) -> Callable[[], object]:
    words_a, words_b = first.lower().split(), second.lower().split()
    return lambda: difflib.SequenceMatcher(None, words_a, words_b, autojunk=False).get_matching_blocks()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    pairs = demo_pairs()
    longest = max(pairs, key=lambda pair: len(pair[0]) + len(pair[1]))
    long_first = joined_to([first for first, _ in pairs], LONG)
    long_second = joined_to([second for _, second in pairs], LONG)
    shuffled = long_first.split()
    random.Random(0).shuffle(shuffled)
    cases = [
        (f"longest demo pair ({len(longest[0])} + {len(longest[1])} chars)", *longest),
        (f"1,000-char paraphrase ({len(long_first)} + {len(long_second)} chars)", long_first, long_second),
        (f"1,000-char shuffled ({len(long_first)} + {len(long_first)} chars)", long_first, " ".join(shuffled)),
    ]
    print(f"{'case':<44} {'highlight µs':>13} {'difflib µs':>11} {'ratio':>7}")
    for name, first, second in cases:
        ours = best_microseconds(lambda first=first, second=second: highlight(first, second), args.repeats)
        theirs = best_microseconds(reference(first, second), args.repeats)
        print(f"{name:<44} {ours:>13.1f} {theirs:>11.1f} {ours / theirs:>6.1f}x")


if __name__ == "__main__":
    main()
