#!/usr/bin/env python
"""The stopping rule read after every judgement: false positives, power, judgements at stop.

    nice .venv/bin/python benchmarks/record.py stopping_rule -- .venv/bin/python benchmarks/stopping_rule.py

Simulated campaigns on MRPC (train + test, 5,801 pairs; ``PARAEVAL_SHARED_DATA`` or
``../shared/data``): each campaign draws its pairs at random from the corpus (with replacement),
three simulated volunteers judge each pair, each giving MRPC's gold label except with
probability ``--noise`` the opposite one, and the pair's label is their majority. The
question is the paired ROC AUC difference of two metrics; the dashboard is read after every
judgement (the sequence moves when a pair gets its third judgement, so every completion is a
look). Two rules are compared: the always-valid confidence sequence of
:mod:`scoring.analysis.sequential` and the naive one, DeLong's fixed-sample test (p < alpha)
repeated at every look.

* **Equal AUC** (the false-positive rate): A and B are the character and the word edit
  similarity of each pair (percentile ranks over the corpus), assigned to A or B by a fair coin
  per pair and campaign, so that A and B are exchangeable and their AUCs equal exactly.
* **Power**: A is the character edit similarity, B the same plus Gaussian noise whose scale is
  chosen so that, by the normal approximation (DeLong's standard error of one large sample
  scaled by 1 / sqrt(n)), a fixed-sample test at ``--planned`` labelled pairs has power 0.80.
  The campaign may run to ``--cap`` times the planned pairs; the confidence sequence is tuned
  to be tightest at the planned size.

Judgements at stop: three per labelled pair at the first crossing (or at the cap when none).
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

from scoring.analysis import paired, sequential  # noqa: E402
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


def effect_for(x: np.ndarray, gold: np.ndarray, noise: float, planned: int, seed: int) -> tuple[float, float, float]:
    """The noise scale s making B = x + s N(0, sd(x)) have fixed-sample power 0.80 at ``planned``
    pairs (normal approximation on one large simulated sample); with the AUC difference and
    sigma = DeLong's standard error x sqrt(n) there."""
    rng = np.random.default_rng([seed, 1])
    big = 40_000
    drawn = rng.integers(0, len(gold), big)
    labels = volunteer_labels(gold, drawn, noise, rng)
    base = rng.normal(0, x.std(), big)
    a = x[drawn]
    target = stats.norm.ppf(0.975) + stats.norm.ppf(0.80)

    def standardised(scale: float) -> tuple[float, float]:
        d, se, _ = paired.delong_test(
            paired.delong_components(a, labels), paired.delong_components(a + scale * base, labels)
        )
        return d, se * math.sqrt(big)

    low, high = 0.0, 5.0
    for _ in range(40):
        middle = (low + high) / 2
        d, sigma = standardised(middle)
        if d / (sigma / math.sqrt(planned)) < target:
            low = middle
        else:
            high = middle
    d, sigma = standardised(high)
    return high, d, sigma


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
    parser.add_argument("--planned", type=int, default=500, help="planned labelled pairs")
    parser.add_argument("--cap", type=float, default=2.0, help="campaign size at most, times the planned pairs")
    parser.add_argument("--noise", type=float, default=0.15, help="chance that a judge flips the gold label")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()
    started = time.perf_counter()
    gold, chars, words = load_mrpc()
    cap = round(args.planned * args.cap)
    rng = np.random.default_rng(args.seed)
    alpha, planned, campaigns = args.alpha, args.planned, args.campaigns
    print(
        f"MRPC, {len(gold):,} pairs; {campaigns:,} simulated campaigns per scenario, {JUDGES} judges per pair "
        f"(each flips the gold label with probability {args.noise}); alpha = {alpha}; seed {args.seed}"
    )
    print(f"The dashboard read after every judgement, up to {cap:,} labelled pairs ({cap * JUDGES:,} judgements).")

    # --- equal AUC -------------------------------------------------------------------------------
    x, y = ranks(chars), ranks(words)
    drawn = rng.integers(0, len(gold), (campaigns, cap))
    labels = volunteer_labels(gold, drawn, args.noise, rng)
    coin = rng.random((campaigns, cap)) < 0.5
    a = np.where(coin, x[drawn], y[drawn])
    b = np.where(coin, y[drawn], x[drawn])
    null = sequential.delong_paths(a, b, labels)
    crossed = sequential.crossings(null, alpha, planned)
    print()
    print("Equal AUC (character and word edit similarity, exchanged at random per pair): false-positive rate")
    print(f"  always-valid confidence sequence: {binomial_interval(int((crossed.always_valid >= 0).sum()), campaigns)}")
    print(f"  naive DeLong test at every look:  {binomial_interval(int((crossed.naive >= 0).sum()), campaigns)}")
    at_planned = sequential.naive_mask(null, alpha)[:, planned - 1]
    print(f"  DeLong test once, at {planned} pairs: {binomial_interval(int(at_planned.sum()), campaigns)}")

    # --- power -------------------------------------------------------------------------------------
    scale, difference, sigma = effect_for(chars, gold, args.noise, planned, args.seed)
    predicted = fixed_power(difference, sigma, planned, alpha)
    drawn = rng.integers(0, len(gold), (campaigns, cap))
    labels = volunteer_labels(gold, drawn, args.noise, rng)
    a = chars[drawn]
    b = a + scale * rng.normal(0, chars.std(), (campaigns, cap))
    effect = sequential.delong_paths(a, b, labels)
    crossed = sequential.crossings(effect, alpha, planned)
    first = crossed.always_valid
    stopped = first >= 0
    right_sign = stopped & (effect.difference[np.arange(campaigns), np.maximum(first, 0)] > 0)
    fixed_once = sequential.naive_mask(effect, alpha)[:, planned - 1] & (effect.difference[:, planned - 1] > 0)
    pairs_at_stop = np.where(stopped, first + 1, cap)
    print()
    print(
        f"Power: B = A + noise (scale {scale:.3f} x sd of A): AUC difference {difference:.4f}, "
        f"sigma {sigma:.3f} (DeLong's standard error x sqrt(n))"
    )
    print(
        f"  fixed design at {planned} pairs, normal approximation: power {predicted:.3f}; "
        f"observed over the campaigns: {binomial_interval(int(fixed_once.sum()), campaigns)}"
    )
    by_planned = right_sign & (first < planned)
    print(f"  always-valid, settled by {planned} pairs:        {binomial_interval(int(by_planned.sum()), campaigns)}")
    print(f"  always-valid, settled by {cap} pairs (the cap): {binomial_interval(int(right_sign.sum()), campaigns)}")
    print(f"  settled with the wrong sign: {int((stopped & ~right_sign).sum())} of {campaigns}")
    print(
        f"  judgements at stop (the cap when not settled): mean {pairs_at_stop.mean() * JUDGES:,.0f}, "
        f"median {np.median(pairs_at_stop) * JUDGES:,.0f}; a fixed design: {planned * JUDGES:,}"
    )
    needed = next(
        (n for n in range(planned, cap + 1) if (right_sign & (first < n)).mean() >= 0.8),
        None,
    )
    if needed is None:
        print(f"  power 0.8 not reached by the cap ({cap} pairs)")
    else:
        print(
            f"  power 0.8 reached by {needed} pairs ({needed / planned:.2f} x the planned size, "
            f"{needed * JUDGES:,} judgements)"
        )
    m = float(sequential.multiplier(planned, alpha, planned))
    print(f"  at {planned} pairs the always-valid half-width is {m:.2f} standard errors (fixed-sample: 1.96)")
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
