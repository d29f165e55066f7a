"""Ties, thresholds, calibration, ceiling, systems and groups: hand cases and independent implementations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

from scoring.analysis.binary import rank
from scoring.analysis.calibration import calibration
from scoring.analysis.ceiling import human_ceiling
from scoring.analysis.meta import MetaOptions, meta_evaluation
from scoring.analysis.systems import source_groups, system_view
from scoring.analysis.thresholds import cross_validated, tied_best
from scoring.analysis.ties import tie_statistics
from tests.test_analysis_report import make_input


def test_acc23_hand_case_and_tie_calibration():
    # Human 1, 1, 2; metric .1, .2, .9: (0,1) tied in human only, (0,2) and (1,2) concordant.
    result = tie_statistics(np.array([0.1, 0.2, 0.9]), np.array([1.0, 1.0, 2.0]))
    assert result.acc23 == pytest.approx(2 / 3)
    assert result.acc23_calibrated == 1.0 and result.epsilon == pytest.approx(0.1)
    assert result.tau_b == pytest.approx(stats.kendalltau([0.1, 0.2, 0.9], [1, 1, 2], variant="b")[0])
    assert result.tau_c == pytest.approx(stats.kendalltau([0.1, 0.2, 0.9], [1, 1, 2], variant="c")[0])


def test_acc23_all_tied():
    result = tie_statistics(np.ones(4), np.full(4, 3.0))
    assert (result.acc23, result.acc23_calibrated, result.epsilon, result.tau_b) == (1.0, 1.0, 0.0, None)


def test_acc23_matches_brute_force():
    rng = np.random.default_rng(4)
    human = rng.integers(1, 5, 40).astype(float)
    metric = np.round(human + rng.normal(0, 1, 40), 1)
    result = tie_statistics(metric, human)

    def brute(eps):
        good = 0
        for i in range(40):
            for j in range(i + 1, 40):
                dm, dh = metric[i] - metric[j], human[i] - human[j]
                good += (abs(dm) <= eps) if dh == 0 else (abs(dm) > eps and np.sign(dm) == np.sign(dh))
        return good / (40 * 39 / 2)

    assert result.acc23 == pytest.approx(brute(0.0))
    candidates = np.unique(np.abs(metric[:, None] - metric[None]))
    assert result.acc23_calibrated == pytest.approx(max(brute(e) for e in candidates))


def test_tied_best_thresholds_and_cross_validation():
    # Scores 4 3 2 1, labels 1 0 1 0: cuts at 4 (3/4) and 2 (3/4) tie for the best accuracy.
    tied = tied_best(rank(np.array([4.0, 3.0, 2.0, 1.0]), np.array([True, False, True, False])))
    assert (tied.count, tied.highest, tied.lowest) == (2, 4.0, 2.0)
    scores = np.arange(20, dtype=float)
    labels = scores >= 10
    cv = cross_validated(scores, labels, folds=5, seed=0)
    assert cv.accuracy >= 0.9 and cv.correct.shape == (20,)


def test_calibration_matches_scikit_learn():
    rng = np.random.default_rng(2)
    scores = rng.normal(0, 2, 500)
    labels = rng.random(500) < 1 / (1 + np.exp(-scores))
    result = calibration(scores, labels)
    p = 1 / (1 + np.exp(-scores))
    assert result.brier == pytest.approx(brier_score_loss(labels, p))
    share, mean = calibration_curve(labels, p, n_bins=10, strategy="uniform")
    ours = [(b.paraphrase_share, b.mean_probability) for b in result.bins if b.n]
    assert [s for s, _ in ours] == pytest.approx(list(share)) and [m for _, m in ours] == pytest.approx(list(mean))
    expected_ece = sum(b.n / 500 * abs(b.paraphrase_share - b.mean_probability) for b in result.bins if b.n)
    assert result.ece == pytest.approx(expected_ece)


def test_calibration_single_class():
    result = calibration(np.array([0.0, 0.0]), np.array([True, True]))
    assert result.brier == 0.25 and result.ece == 0.5


def test_human_ceiling_hand_case():
    # Pair 0: judges 1, 1, 0; pair 1: judges 0, 0, 0. Each judgement vs the other two (strict majority only).
    pair = np.array([0, 0, 0, 1, 1, 1])
    binary = np.array([1, 1, 0, 0, 0, 0], dtype=np.int8)
    predictions = np.array([[1.0, 0.0]])
    (row,) = human_ceiling(pair, binary, 2, [9], predictions, resamples=50)
    # Pair 0: judge 1 vs (1, 0) tie -> not compared; judge 2 vs (1, 0) tie; judge 3 vs (1, 1) -> disagrees.
    # Pair 1: every judge agrees. Comparisons: 1 + 3 = 4; judges agree on 3; metric (1 on pair 0, 0 on pair 1): 4.
    assert (row.comparisons, row.pairs) == (4, 2)
    assert row.judge_agreement == 0.75 and row.metric_agreement == 1.0


def test_system_view_and_soft_pairwise_accuracy():
    systems = ["A"] * 4 + ["B"] * 4 + ["C"] * 4
    sources = [f"s{i}" for i in range(4)] * 3
    human = np.array([4, 4, 3, 4, 2, 2, 3, 2, 1, 1, 2, 1], dtype=float)
    binary = (human >= 3).astype(np.int8)
    same = human[None, :].copy()
    view = system_view(systems, sources, binary, human, [1], same, same, resamples=100)
    assert [row.system for row in view.systems] == ["A", "B", "C"]
    assert view.systems[0].paraphrase_rate == 1.0 and view.systems[0].mean_ordinal == 3.75
    # A metric equal to the human scale gets the same p-values: SPA = 1, correlations 1.
    assert view.metrics[0].spa == 1.0 and view.metrics[0].pearson == pytest.approx(1.0)
    assert view.paired_by_source and view.system_pairs == 3
    assert system_view(["A"] * 3, None, binary[:3], human[:3], [1], same[:, :3], same[:, :3]) is None


def test_source_groups_r_precision_hand_case():
    sources = ["x", "x", "x", "y", "y", "z"]
    binary = np.array([1, 0, 1, 0, 1, 1], dtype=np.int8)
    human = np.array([4, 1, 3, 2, 3, 4], dtype=float)
    metric = np.array([[0.9, 0.8, 0.1, 0.2, 0.7, 0.5]])
    groups, (row,), _ = source_groups(sources, binary, human, [1], metric)
    # x: R = 2, top-2 by metric = items 0, 1 -> 1/2; y: R = 1, top-1 = item 4 -> 1. Mean .75.
    assert groups == 2 and row.r_precision == 0.75 and row.r_groups == 2
    rho_x = stats.spearmanr([0.9, 0.8, 0.1], [4, 1, 3])[0]
    assert row.spearman == pytest.approx((rho_x + 1.0) / 2)


def test_meta_evaluation_on_the_report_fixture_is_json_ready():
    import json

    result = meta_evaluation(make_input(), MetaOptions(resamples=50))
    data = json.loads(json.dumps(result.as_dict(), allow_nan=False))
    assert [metric["label"] for metric in data["metrics"]] == ["SIM", "LEV", "PP"]
    assert data["systems"] is None and data["systems_note"].startswith("No pair names the system")
    thresholds = {row["metric"]: row for row in data["thresholds"]}
    assert thresholds[3]["natural_accuracy"] == 1.0 and thresholds[1]["best_accuracy"] == 1.0
    ranking = {r["statistic"]: r for r in data["rankings"]}
    assert [row["rank"] for row in ranking["auc"]["rows"]] == [1, 1, 1]


def test_soft_pairwise_accuracy_interval():
    rng = np.random.default_rng(4)
    systems = ["A"] * 12 + ["B"] * 12 + ["C"] * 12
    human = np.concatenate([rng.integers(3, 5, 12), rng.integers(2, 4, 12), rng.integers(1, 3, 12)]).astype(float)
    binary = (human >= 3).astype(np.int8)
    noisy = human + rng.normal(0, 1.5, len(human))
    scores = np.vstack([human, noisy])
    view = system_view(systems, None, binary, human, [1, 2], scores, scores, resamples=200, seed=3, spa_resamples=60)
    same, other = view.metrics
    assert view.spa_resamples == 60
    # A metric equal to the human scale has SPA 1 in every resample.
    assert same.spa == 1.0 and same.spa_interval == [1.0, 1.0]
    low, high = other.spa_interval
    assert 0 <= low < high <= 1 and low <= other.spa <= high
    again = system_view(systems, None, binary, human, [1, 2], scores, scores, resamples=200, seed=3, spa_resamples=60)
    assert again.metrics[1].spa_interval == other.spa_interval  # seeded
    reseeded = system_view(
        systems, None, binary, human, [1, 2], scores, scores, resamples=200, seed=4, spa_resamples=60
    )
    assert reseeded.metrics[1].spa_interval != other.spa_interval
    # spa_resamples=0: no interval.
    none = system_view(systems, None, binary, human, [1, 2], scores, scores, resamples=200, spa_resamples=0)
    assert none.metrics[1].spa_interval is None and none.spa_resamples == 0
