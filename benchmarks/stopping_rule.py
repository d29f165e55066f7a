#!/usr/bin/env python
"""The stopping rule read after every judgement: false positives, power, judgements at stop.

    nice .venv/bin/python benchmarks/record.py stopping_rule -- .venv/bin/python benchmarks/stopping_rule.py

Simulated campaigns on MRPC (train + test, 5,801 pairs; ``PARAEVAL_SHARED_DATA`` or
``../shared/data``): each campaign draws distinct pairs from the corpus in a random order,
three simulated volunteers judge each pair, each giving MRPC's gold label except with
probability ``--noise`` the opposite one, and the pair's label is their majority. The
question is the paired ROC AUC difference of two metrics; the dashboard is read after every
judgement (the sequence moves when a pair gets its third judgement, so every completion is a
look). Two stopping methods: the always-valid confidence sequence of
:mod:`scoring.analysis.sequential` (decides at every look) and the group-sequential
O'Brien-Fleming alpha-spending plan of :mod:`scoring.analysis.sequential_design` (read at every
look, decides only at its ``--looks`` looks); the naive rule, DeLong's fixed-sample test
(p < alpha) repeated at every look, is the contrast.

* **The planner**: A is the character edit similarity, B the same plus Gaussian noise fixed per
  corpus pair, its scale chosen so that the planner (:mod:`scoring.analysis.planning`, the
  gold labels as the truth) says a fixed design of ``--planned`` pairs has power 0.80. The
  planner then gives each method's own size for power 0.8 and its predicted power there.
* **Equal AUC** (the false-positive rate): A and B are the character and the word edit
  similarity of each pair (percentile ranks over the corpus), assigned to A or B by a fair coin
  per pair and campaign, so that A and B are exchangeable and their AUCs equal exactly. The
  campaigns run to ``--cap`` times the methods' size.
* **Power**: each method run on its own planned size; the share of campaigns it settled (with
  A better) by that size, against the planner's prediction.

Judgements at stop: three per labelled pair at the first crossing (or at the size when none).
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
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.analysis import planning, sequential, sequential_design  # noqa: E402
from scoring.analysis.bootstrap import DEFAULT_SEED  # noqa: E402
from scoring.metrics.lexical import normalised_char_distance, normalised_word_distance  # noqa: E402

DATA = Path(os.environ.get("PARAEVAL_SHARED_DATA") or ROOT.parent / "shared" / "data") / "mrpc"
JUDGES = 3


def load_mrpc() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gold labels and the two metrics' oriented scores (higher: closer) of every MRPC pair."""
    gold, chars, words = [], [], []
    for part in ("test", "train"):
        with open(DATA / f"msr_paraphrase_{part}.txt", encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            next(reader)
            for row in reader:
                gold.append(row[0] == "1")
                chars.append(-normalised_char_distance(row[3], row[4]))
                words.append(-normalised_word_distance(row[3], row[4]))
    return np.array(gold), np.array(chars), np.array(words)


def ranks(values: np.ndarray) -> np.ndarray:
    return stats.rankdata(values) / len(values)


def volunteer_labels(gold: np.ndarray, drawn: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """Majority of JUDGES noisy judges per drawn pair."""
    right = rng.random((*drawn.shape, JUDGES)) >= noise
    votes = np.where(right, gold[drawn][..., None], ~gold[drawn][..., None])
    return votes.sum(axis=-1) * 2 > JUDGES


def pool_input(a: np.ndarray, b: np.ndarray, gold: np.ndarray, noise: float) -> planning.PlanInput:
    """The planner's view of the corpus: both metrics' scores, the gold labels as the truth."""
    return planning.PlanInput(
        ["A", "B"], np.array([a, b]), gold.astype(np.float64), planning.NoiseModel.from_flip(noise)
    )


def effect_for(x: np.ndarray, gold: np.ndarray, noise: float, planned: int, seed: int) -> tuple[float, np.ndarray]:
    """B = x + s e, e a fixed standard normal per corpus pair times sd(x): the scale s for which the
    planner says a fixed design of ``planned`` pairs (three judges) has power 0.80."""
    rng = np.random.default_rng([seed, 1])
    base = rng.normal(0, x.std(), len(x))

    def power(scale: float) -> float:
        model = planning.rule_model(
            pool_input(x, x + scale * base, gold, noise), planning.Question.AUC, JUDGES, 0.05, 5
        )
        assert model is not None
        return model.fixed_power(planned)

    low, high = 0.0, 5.0
    for _ in range(40):
        middle = (low + high) / 2
        if power(middle) < 0.8:
            low = middle
        else:
            high = middle
    return high, x + high * base


def fixed_power(difference: float, sigma: float, n: int, alpha: float) -> float:
    z = stats.norm.ppf(1 - alpha / 2)
    shift = difference / (sigma / math.sqrt(n))
    return float(stats.norm.cdf(shift - z) + stats.norm.cdf(-shift - z))


def binomial_interval(hits: int, n: int) -> str:
    """The share with its exact (Clopper-Pearson) 95 % interval."""
    low = stats.beta.ppf(0.025, hits, n - hits + 1) if hits else 0.0
    high = stats.beta.ppf(0.975, hits + 1, n - hits) if hits < n else 1.0
    return f"{hits / n:.3f} [{low:.3f}, {high:.3f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaigns", type=int, default=1000)
    parser.add_argument("--planned", type=int, default=500, help="pairs where the fixed design has power 0.8")
    parser.add_argument("--cap", type=float, default=2.0, help="equal AUC: campaigns run to this times the rule's size")
    parser.add_argument("--noise", type=float, default=0.15, help="chance that a judge flips the gold label")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--looks", type=int, default=sequential_design.DEFAULT_LOOKS)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()
    started = time.perf_counter()
    gold, chars, words = load_mrpc()
    rng = np.random.default_rng(args.seed)
    alpha, campaigns = args.alpha, args.campaigns
    print(
        f"MRPC, {len(gold):,} pairs; {campaigns:,} simulated campaigns per scenario, each drawing distinct pairs, "
        f"{JUDGES} judges per pair (each flips the gold label with probability {args.noise}); alpha = {alpha}; "
        f"seed {args.seed}"
    )

    # --- the planner ------------------------------------------------------------------------------
    scale, b_scores = effect_for(chars, gold, args.noise, args.planned, args.seed)
    model = planning.rule_model(
        pool_input(chars, b_scores, gold, args.noise), planning.Question.AUC, JUDGES, alpha, args.looks
    )
    assert model is not None
    sizes = model.sizes(JUDGES)
    assert sizes.fixed and sizes.sequence and sizes.group_sequential and sizes.group_sequential_planned
    assert sizes.sequence_power is not None and sizes.group_sequential_power is not None
    gs = sequential_design.group_sequential_plan(sizes.group_sequential_planned, args.looks, alpha)
    print(
        f"B = A + noise fixed per pair (scale {scale:.3f} x sd of A): the planner's AUC difference "
        f"{model.difference:.4f}, sigma {math.sqrt(model.variance):.3f} per labelled pair"
    )
    print("The planner's sizes for power 0.8:")
    print(f"  fixed design (one test at the end):                 {sizes.fixed} pairs")
    print(f"  always-valid confidence sequence, tuned there:      {sizes.sequence} pairs")
    print(
        f"  group-sequential, O'Brien-Fleming spending, {args.looks} looks: planned {sizes.group_sequential_planned}, "
        f"at most {gs.max_pairs} pairs (x {sequential_design.inflation(args.looks, alpha):.3f}); looks at "
        f"{', '.join(map(str, gs.looks))}; |Z| boundaries {', '.join(f'{c:.3f}' for c in gs.boundaries)}"
    )
    cs_question = sequential.Question(0, 1, alpha=alpha, planned_pairs=sizes.sequence)

    # --- equal AUC -------------------------------------------------------------------------------
    cap = round(max(sizes.sequence, gs.max_pairs) * args.cap)
    print()
    print(
        f"Equal AUC (character and word edit similarity, exchanged at random per pair): false-positive rate, the "
        f"dashboard read after every judgement up to {cap:,} labelled pairs ({cap * JUDGES:,} judgements)"
    )
    x, y = ranks(chars), ranks(words)
    drawn = draw(rng, len(gold), campaigns, cap)
    labels = volunteer_labels(gold, drawn, args.noise, rng)
    coin = rng.random((campaigns, cap)) < 0.5
    a = np.where(coin, x[drawn], y[drawn])
    b = np.where(coin, y[drawn], x[drawn])
    null = sequential.delong_paths(a, b, labels)
    crossed = sequential.crossings(null, alpha, cs_question.planned_pairs)
    gs_null = sequential.first_true(sequential.group_sequential_mask(null, gs))
    print(
        f"  always-valid confidence sequence:   {binomial_interval(int((crossed.always_valid >= 0).sum()), campaigns)}"
    )
    print(f"  group-sequential (decides at looks): {binomial_interval(int((gs_null >= 0).sum()), campaigns)}")
    print(f"  naive DeLong test at every look:     {binomial_interval(int((crossed.naive >= 0).sum()), campaigns)}")

    # --- power -------------------------------------------------------------------------------------
    longest = max(sizes.sequence, gs.max_pairs, sizes.fixed, args.planned)
    drawn = draw(rng, len(gold), campaigns, longest)
    labels = volunteer_labels(gold, drawn, args.noise, rng)
    effect = sequential.delong_paths(chars[drawn], b_scores[drawn], labels)
    rows = np.arange(campaigns)
    print()
    print("Power (settled with A better): predicted by the planner, observed over the campaigns")

    def line(name: str, predicted: float, hits: np.ndarray) -> None:
        observed = float(hits.mean())
        gap = predicted - observed
        print(
            f"  {name}: predicted {predicted:.3f}, observed {binomial_interval(int(hits.sum()), campaigns)}; "
            f"difference {gap:+.3f} ({'within' if abs(gap) <= 0.05 else 'OUTSIDE'} 0.05)"
        )

    n = sizes.fixed
    once = sequential.naive_mask(effect, alpha)[:, n - 1] & (effect.difference[:, n - 1] > 0)
    line(f"fixed design, one test at {n} pairs", model.fixed_power(n), once)
    tuned = sequential.crossings(effect, alpha, sizes.sequence).always_valid
    right = (tuned >= 0) & (effect.difference[rows, np.maximum(tuned, 0)] > 0)
    line(
        f"confidence sequence by {sizes.sequence} pairs (its size for 0.8)",
        sizes.sequence_power,
        right & (tuned < sizes.sequence),
    )
    early = sequential.crossings(effect, alpha, args.planned).always_valid
    right_early = (early >= 0) & (effect.difference[rows, np.maximum(early, 0)] > 0) & (early < args.planned)
    line(f"confidence sequence by {args.planned} pairs (tuned there)", model.sequence_power(args.planned), right_early)
    stop = sequential.first_true(sequential.group_sequential_mask(effect, gs))
    gs_right = (stop >= 0) & (effect.difference[rows, np.maximum(stop, 0)] > 0)
    line(f"group-sequential by {gs.max_pairs} pairs (its maximum)", sizes.group_sequential_power, gs_right)
    wrong = int(((tuned >= 0) & ~right).sum()) + int(((stop >= 0) & ~gs_right).sum())
    print(f"  settled with the wrong sign: {wrong} of {2 * campaigns}")
    cs_stop = np.where(tuned >= 0, np.minimum(tuned + 1, sizes.sequence), sizes.sequence)
    gs_stop = np.where(stop >= 0, stop + 1, gs.max_pairs)
    print(
        f"  judgements at stop (the rule's size when not settled): confidence sequence mean "
        f"{cs_stop.mean() * JUDGES:,.0f}; group-sequential mean {gs_stop.mean() * JUDGES:,.0f}; "
        f"fixed design {sizes.fixed * JUDGES:,}"
    )
    m = float(sequential.multiplier(args.planned, alpha, args.planned))
    print(f"  at {args.planned} pairs the always-valid half-width is {m:.2f} standard errors (fixed-sample: 1.96)")
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


def draw(rng: np.random.Generator, pool: int, campaigns: int, size: int) -> np.ndarray:
    """Each campaign's pairs: ``size`` distinct corpus pairs in a random order."""
    return np.argsort(rng.random((campaigns, pool)), axis=1)[:, :size]


if __name__ == "__main__":
    sys.exit(main())
