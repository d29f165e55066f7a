#!/usr/bin/env python
"""The planner's predicted power against the power of simulated campaigns, on MRPC.

    nice .venv/bin/python benchmarks/record.py planning -- .venv/bin/python benchmarks/planning.py

MRPC (train + test, 5,801 pairs; ``PARAEVAL_SHARED_DATA`` or ``../shared/data``) is the pool,
its gold labels the truth. Three lexical metrics score it in-process: the character edit
similarity, the word-set Jaccard overlap and the length ratio. For each question (the paired
ΔAUC of the first two, the difference of their Pearson r with the volunteers' scores, the
clusters of all three) and each cell of the grid, the planner's prediction
(:func:`scoring.analysis.planning.plan`, a closed form) is set beside the power observed over
``--campaigns`` simulated campaigns (:func:`scoring.analysis.planning.simulate`: each draws its
pairs from the pool, each judge gives the gold answer except with probability ``--noise``, the
dashboard's own DeLong, Williams and Holm decide). The Monte-Carlo standard error of the
observed power is sqrt(p (1 - p) / campaigns), 0.011 at most at the default 2,000 campaigns;
the target is |predicted - observed| <= 0.05.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.analysis import planning  # noqa: E402
from scoring.analysis.bootstrap import DEFAULT_SEED  # noqa: E402
from scoring.metrics.lexical import normalised_char_distance, words  # noqa: E402

DATA = Path(os.environ.get("PARAEVAL_SHARED_DATA") or ROOT.parent / "shared" / "data") / "mrpc"
NAMES = ["char edit similarity", "word Jaccard", "length ratio"]


def load_mrpc() -> tuple[np.ndarray, np.ndarray]:
    """Gold labels and the three metrics' scores (higher: closer) of every MRPC pair."""
    gold, rows = [], []
    for part in ("test", "train"):
        with open(DATA / f"msr_paraphrase_{part}.txt", encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            next(reader)
            for row in reader:
                a, b = row[3], row[4]
                left, right = set(words(a.lower())), set(words(b.lower()))
                gold.append(row[0] == "1")
                rows.append(
                    (
                        -normalised_char_distance(a, b),
                        len(left & right) / max(1, len(left | right)),
                        min(len(a), len(b)) / max(len(a), len(b), 1),
                    )
                )
    return np.array(rows).T, np.array(gold, dtype=np.float64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--campaigns", type=int, default=2000, help="Simulated campaigns per cell.")
    parser.add_argument("--noise", type=float, default=0.2, help="Flip probability of one judge.")
    parser.add_argument("--pairs", default="150,400,1000", help="Numbers of pairs.")
    parser.add_argument("--judges", default="1,3,5", help="Judges per pair.")
    args = parser.parse_args()
    pairs = [int(n) for n in args.pairs.split(",")]
    judges = [int(k) for k in args.judges.split(",")]
    scores, gold = load_mrpc()
    print(
        f"MRPC: {len(gold)} pairs, {100 * gold.mean():.1f} % paraphrases (gold = truth); one judge wrong with "
        f"probability {args.noise}; {args.campaigns} simulated campaigns per cell; alpha 0.05; seed {DEFAULT_SEED}."
    )
    worst = 0.0
    cells = within = 0
    planned_seconds = simulated_seconds = 0.0
    for question in planning.Question:
        count = 3 if question is planning.Question.CLUSTERS else 2
        data = planning.PlanInput(NAMES[:count], scores[:count], gold, planning.NoiseModel.from_flip(args.noise))
        start = time.perf_counter()
        plan = planning.plan(data, question, pairs, judges)
        planned_seconds += time.perf_counter() - start
        label = "mean |\u0394AUC|" if question is planning.Question.CLUSTERS else "difference"
        print(
            f"\n{question.label}: {', '.join(data.metric_names)}; {label} with gold labels {plan.true_difference:+.4f}"
        )
        print(
            f"{'pairs':>6} {'judges':>6} {'predicted':>9} {'observed':>8} {'(se)':>6} {'|diff|':>6} "
            f"{'width pred':>10} {'width seen':>10}"
        )
        for cell in plan.cells:
            start = time.perf_counter()
            seen = planning.simulate(
                data, question, cell.pairs, cell.judges, campaigns=args.campaigns, seed=DEFAULT_SEED
            )
            simulated_seconds += time.perf_counter() - start
            se = math.sqrt(max(seen.power * (1 - seen.power), 1e-12) / seen.campaigns)
            gap = abs(cell.power - seen.power)
            worst = max(worst, gap)
            cells += 1
            within += gap <= 0.05
            print(
                f"{cell.pairs:>6} {cell.judges:>6} {cell.power:>9.3f} {seen.power:>8.3f} {se:>6.3f} {gap:>6.3f} "
                f"{cell.width:>10.4f} {seen.width:>10.4f}"
            )
    print(
        f"\nmax |predicted - observed power| = {worst:.3f} over {cells} cells; {within} of {cells} within 0.05. "
        f"Width seen: the mean width of the campaigns' 95 % intervals (DeLong's; for Pearson r the delta method's)."
    )
    print(
        f"The planner's {cells} predictions took {planned_seconds:.2f} s; the simulations "
        f"{simulated_seconds:.0f} s ({simulated_seconds / planned_seconds:.0f} x)."
    )


if __name__ == "__main__":
    main()
