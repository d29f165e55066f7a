"""The human ceiling's interval resamples judges as well as pairs (a crossed bootstrap)."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.analysis.ceiling import human_ceiling


def campaign(seed: int = 0, pairs: int = 150, judges: int = 6, per_pair: int = 3):
    """Two of the six judges answer nearly at random; the others err 10% of the time."""
    rng = np.random.default_rng(seed)
    truth = rng.random(pairs) < 0.6
    noise = np.array([0.45, 0.45] + [0.1] * (judges - 2))
    pair_index, judge, binary = [], [], []
    for pair in range(pairs):
        for who in rng.choice(judges, per_pair, replace=False):
            wrong = rng.random() < noise[who]
            pair_index.append(pair)
            judge.append(int(who))
            binary.append(int(truth[pair] != wrong))
    return truth, np.array(pair_index), np.array(judge), np.array(binary, dtype=np.int8)


def reference_interval(pair_index, judge, binary, decision, resamples: int, seed: int):
    """Loops: each judgement against the strict majority of the others; draw pairs and judges
    with replacement, weight each comparison by (times its pair drawn) x (times its judge drawn)."""
    comparisons = []  # (pair, judge, judge agrees, metric agrees)
    for i, (pair, who, label) in enumerate(zip(pair_index, judge, binary, strict=True)):
        others = [binary[k] for k in range(len(binary)) if pair_index[k] == pair and k != i]
        yes, no = others.count(1), others.count(0)
        if yes == no:
            continue
        majority = int(yes > no)
        comparisons.append((pair, who, label == majority, decision[pair] == majority))
    pairs = sorted({c[0] for c in comparisons})
    judges = sorted({c[1] for c in comparisons})
    rng = np.random.default_rng(seed)
    judge_values, metric_values = [], []
    for _ in range(resamples):
        pair_count = dict.fromkeys(pairs, 0)
        for p in rng.choice(pairs, len(pairs)):
            pair_count[p] += 1
        judge_count = dict.fromkeys(judges, 0)
        for j in rng.choice(judges, len(judges)):
            judge_count[j] += 1
        weights = np.array([pair_count[p] * judge_count[j] for p, j, _, _ in comparisons], dtype=float)
        if weights.sum() == 0:
            continue
        judge_values.append(np.average([c[2] for c in comparisons], weights=weights))
        metric_values.append(np.average([c[3] for c in comparisons], weights=weights))
    return np.percentile(judge_values, [2.5, 97.5]), np.percentile(metric_values, [2.5, 97.5])


def test_crossed_interval_matches_a_loop_implementation():
    truth, pair_index, judge, binary = campaign()
    predictions = truth[None, :].astype(float)
    (row,) = human_ceiling(pair_index, binary, len(truth), [1], predictions, resamples=3000, seed=2, judge=judge)
    judge_ref, metric_ref = reference_interval(pair_index, judge, binary, truth.astype(int), 3000, 9)
    # Two Monte-Carlo bootstraps of 3,000 resamples: the same interval to Monte-Carlo error.
    assert (row.judge_interval.low, row.judge_interval.high) == pytest.approx(tuple(judge_ref), abs=0.015)
    assert (row.metric_interval.low, row.metric_interval.high) == pytest.approx(tuple(metric_ref), abs=0.015)


def test_resampling_judges_widens_the_interval_when_judges_differ():
    truth, pair_index, judge, binary = campaign(1)
    predictions = truth[None, :].astype(float)
    (pairs_only,) = human_ceiling(pair_index, binary, len(truth), [1], predictions, resamples=1000, seed=2)
    (crossed,) = human_ceiling(pair_index, binary, len(truth), [1], predictions, resamples=1000, seed=2, judge=judge)
    assert crossed.judge_agreement == pairs_only.judge_agreement  # the estimate does not change
    width = lambda interval: interval.high - interval.low  # noqa: E731
    assert width(crossed.judge_interval) > 1.5 * width(pairs_only.judge_interval)
    assert crossed.judge_interval.low <= crossed.judge_agreement <= crossed.judge_interval.high
