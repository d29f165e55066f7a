"""How long the dashboard's cards take on a campaign of MRPC test's size, against references run here.

A synthetic probe set of 1,725 source pairs (each with its original pair, three multi-swap
versions, a PAWS-style swap, two controls, a number change, the reversed and the padded pair)
scored by 12 metrics, and 1,725 judged pairs scored by 3 ParaPLUIE templates. Prints the time of
the robustness cards (every metric, 1,000 resamples) against the per-group ranking loop they
replaced (the reference), and of the cross-fitted calibration against one temperature fit on
every pair. Seeded; no database.

    .venv/bin/python benchmarks/cards_speed.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from scoring.analysis.bootstrap import DEFAULT_SEED  # noqa: E402
from scoring.analysis.calibration import fit_temperature  # noqa: E402
from scoring.analysis.cards import ProbeScores, calibration_section, robustness_section  # noqa: E402
from scoring.analysis.robustness import (  # noqa: E402
    ProbeTable,
    _ranking_groups,
    group_r_precision,
    group_spearman,
)

SOURCES = 1725
METRICS = 12
KINDS = [
    ("original", 0),
    ("multi_swap", 1),
    ("multi_swap", 2),
    ("multi_swap", 3),
    ("paws_swap", -1),
    ("control", -1),
    ("control", -1),
    ("number", -1),
    ("reversed", -1),
    ("padded", -1),
]


def main() -> None:
    rng = np.random.default_rng(DEFAULT_SEED)
    groups = np.repeat(np.arange(SOURCES), len(KINDS))
    kinds = tuple(kind for _ in range(SOURCES) for kind, _ in KINDS)
    swaps = np.tile([s for _, s in KINDS], SOURCES)
    scores = rng.normal(size=(METRICS, len(kinds)))
    probes = ProbeScores(1, "probes", groups, kinds, swaps, [(i, f"m{i}", True) for i in range(METRICS)], scores)

    start = time.perf_counter()
    robustness_section(probes, 1000, DEFAULT_SEED)
    cards = time.perf_counter() - start
    start = time.perf_counter()
    for row in range(METRICS):
        table = ProbeTable(groups, kinds, swaps, scores[row])
        for group_swaps, group_scores in _ranking_groups(table):
            group_spearman(group_swaps, group_scores)
            group_r_precision(group_swaps, group_scores)
    loop = time.perf_counter() - start
    print(f"robustness cards, {METRICS} metrics x {len(kinds)} probe pairs, 1000 resamples: {cards:.2f} s")
    print(f"  reference, the per-group ranking loop alone: {loop:.2f} s (cards / loop = {cards / loop:.2f})")

    logits = rng.normal(0, 2, size=(3, SOURCES))
    share = rng.binomial(3, 1 / (1 + np.exp(-logits[0]))) / 3
    start = time.perf_counter()
    calibration_section([(i, f"t{i}") for i in range(3)], 3 * logits, share, "volunteers", seed=DEFAULT_SEED)
    calibration = time.perf_counter() - start
    start = time.perf_counter()
    for row in range(3):
        fit_temperature(3 * logits[row], share)
    single = time.perf_counter() - start
    print(f"calibration, 3 templates x {SOURCES} pairs, 5 folds: {calibration * 1000:.1f} ms")
    print(f"  reference, one fit on every pair: {single * 1000:.1f} ms (ratio {calibration / single:.1f})")


if __name__ == "__main__":
    main()
