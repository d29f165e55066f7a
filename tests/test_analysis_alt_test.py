"""The alternative annotator test (Calderon et al., ACL 2025) against a hand computation with SciPy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scoring.analysis.alt_test import alternative_annotator_test, benjamini_yekutieli


def reference_alt_test(judgements, decisions, epsilon, alpha, min_pairs):
    """Written from the paper's definition with dicts and loops; p-values by scipy.stats.ttest_1samp,
    the correction by scipy.stats.false_discovery_control(method="by")."""
    by_pair: dict[int, dict[int, int]] = {}
    for pair, judge, label in judgements:
        if label >= 0:
            by_pair.setdefault(pair, {})[judge] = label
    judges = sorted({judge for _, judge, label in judgements if label >= 0})
    per_judge = {}
    for j in judges:
        w_metric, w_judge = [], []
        for pair, labels in by_pair.items():
            if j not in labels or len(labels) < 2 or decisions.get(pair) is None:
                continue
            others = [label for k, label in labels.items() if k != j]
            s_metric = sum(label == decisions[pair] for label in others) / len(others)
            s_judge = sum(label == labels[j] for label in others) / len(others)
            w_metric.append(float(s_metric >= s_judge))
            w_judge.append(float(s_judge >= s_metric))
        if len(w_metric) >= min_pairs:
            d = np.array(w_metric) - np.array(w_judge)
            p = stats.ttest_1samp(d, -epsilon, alternative="greater").pvalue
            per_judge[j] = (np.mean(w_metric), np.mean(w_judge), float(p))
    adjusted = stats.false_discovery_control([v[2] for v in per_judge.values()], method="by")
    rejected = {j: bool(q <= alpha) for j, q in zip(per_judge, adjusted, strict=True)}
    return per_judge, rejected, sum(rejected.values()) / len(rejected)


def arrays(judgements, decisions, n_pairs):
    pair = np.array([p for p, _, _ in judgements], dtype=np.int64)
    judge = np.array([j for _, j, _ in judgements], dtype=np.int64)
    binary = np.array([label for _, _, label in judgements], dtype=np.int8)
    predictions = np.array([[decisions.get(i, np.nan) for i in range(n_pairs)]], dtype=np.float64)
    return pair, judge, binary, predictions


def run(judgements, decisions, n_pairs, **options):
    pair, judge, binary, predictions = arrays(judgements, decisions, n_pairs)
    return alternative_annotator_test(pair, judge, binary, [1], predictions, **options)


def test_hand_case_one_judge():
    # Judges 1, 2, 3 on four pairs; the metric's decision per pair.
    judgements = [
        (0, 1, 1), (0, 2, 1), (0, 3, 0),
        (1, 1, 0), (1, 2, 1), (1, 3, 1),
        (2, 1, 1), (2, 2, 1), (2, 3, 1),
        (3, 1, 0), (3, 2, 0), (3, 3, -1),  # judge 3 answered "Don't know": left out
    ]  # fmt: skip
    decisions = {0: 1, 1: 1, 2: 0, 3: 0}
    test = run(judgements, decisions, 4, epsilon=0.1, min_pairs=3)
    (row,) = test.rows
    judge1 = next(t for t in row.tests if t.judge == 1)
    # Judge 1, others' labels and alignment (metric, judge 1):
    # pair 0: others (1, 0): metric 1 -> 1/2, judge 1 -> 1/2: W = (1, 1)
    # pair 1: others (1, 1): metric 1 -> 1,   judge 0 -> 0:   W = (1, 0)
    # pair 2: others (1, 1): metric 0 -> 0,   judge 1 -> 1:   W = (0, 1)
    # pair 3: others (0):    metric 0 -> 1,   judge 0 -> 1:   W = (1, 1)
    assert (judge1.pairs, judge1.rho_metric, judge1.rho_judge) == (4, 0.75, 0.75)
    d = np.array([0, 1, -1, 0], dtype=float)
    assert judge1.p_value == pytest.approx(stats.ttest_1samp(d, -0.1, alternative="greater").pvalue)


def simulated(seed: int, judges: int, pairs: int, per_pair: int, noise: float):
    rng = np.random.default_rng(seed)
    truth = rng.random(pairs) < 0.6
    judgements = []
    for pair in range(pairs):
        for judge in rng.choice(judges, per_pair, replace=False):
            label = int(truth[pair]) if rng.random() > noise else int(not truth[pair])
            judgements.append((pair, int(judge) + 100, label))
    return truth, judgements


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_the_reference_on_simulated_campaigns(seed):
    truth, judgements = simulated(seed, judges=5, pairs=120, per_pair=3, noise=0.2)
    rng = np.random.default_rng(seed + 10)
    # A metric that is right 85% of the time, with a few pairs it did not decide.
    decisions = {i: int(t) if rng.random() < 0.85 else int(not t) for i, t in enumerate(truth) if rng.random() < 0.95}
    test = run(judgements, decisions, len(truth), epsilon=0.1, min_pairs=30)
    (row,) = test.rows
    per_judge, rejected, rate = reference_alt_test(judgements, decisions, 0.1, 0.05, 30)
    assert [t.judge for t in row.tests] == sorted(per_judge)
    for t in row.tests:
        rho_metric, rho_judge, p = per_judge[t.judge]
        assert (t.rho_metric, t.rho_judge) == pytest.approx((rho_metric, rho_judge))
        assert t.p_value == pytest.approx(p, rel=1e-9, abs=1e-15)
        assert t.rejected == rejected[t.judge]
    assert row.winning_rate == pytest.approx(rate) and row.passed == (rate >= 0.5)


def test_power_a_good_metric_passes_a_random_one_fails():
    truth, judgements = simulated(3, judges=4, pairs=200, per_pair=3, noise=0.25)
    rng = np.random.default_rng(5)
    good = {i: int(t) for i, t in enumerate(truth)}  # the truth the judges err around
    random = {i: int(rng.random() < 0.5) for i in range(len(truth))}
    pair, judge, binary, _ = arrays(judgements, good, len(truth))
    predictions = np.array([[good[i] for i in range(len(truth))], [random[i] for i in range(len(truth))]], float)
    test = alternative_annotator_test(pair, judge, binary, [1, 2], predictions, epsilon=0.1)
    good_row, random_row = test.rows
    assert good_row.passed and good_row.winning_rate == 1.0
    assert not random_row.passed and random_row.winning_rate == 0.0


def test_not_run_without_three_judges_on_enough_pairs():
    truth, judgements = simulated(4, judges=2, pairs=80, per_pair=2, noise=0.2)
    decisions = {i: int(t) for i, t in enumerate(truth)}
    test = run(judgements, decisions, len(truth))
    assert test.rows == [] and test.eligible_judges == 2
    assert test.note == (
        "Not run: 2 judge(s) answered at least 30 pairs that another judge also answered; the alternative "
        "annotator test needs 3 or more (leave one out, compare with the others)."
    )


def test_benjamini_yekutieli_matches_scipy():
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = list(rng.random(rng.integers(1, 9)) ** 3)
        expected = list(stats.false_discovery_control(p, method="by") <= 0.05)
        assert benjamini_yekutieli(p, 0.05) == expected
