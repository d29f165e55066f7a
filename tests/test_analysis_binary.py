"""Threshold sweeps, ROC AUC, EER and top-k curves against hand-computed small cases."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from scoring.analysis.binary import (
    at_threshold,
    best_accuracy,
    box_stats,
    class_summary,
    downsample_indices,
    equal_error_rate,
    rank,
    rank_curves,
    roc,
    roc_auc,
)

# Case A, no ties. Paraphrases score 0.9, 0.8, 0.4; non-paraphrases 0.7, 0.3, 0.2.
# Sorted: .9 P, .8 P, .7 N, .4 P, .3 N, .2 N. Operating points (score >= t):
#   t:    none  .9   .8   .7   .4   .3   .2
#   tp:    0    1    2    2    3    3    3
#   fp:    0    0    0    1    1    2    3
#   acc:  3/6  4/6  5/6  4/6  5/6  4/6  3/6
A_SCORES = [0.9, 0.8, 0.4, 0.7, 0.3, 0.2]
A_LABELS = [True, True, True, False, False, False]


def test_best_accuracy_hand_case():
    best = best_accuracy(rank(A_SCORES, A_LABELS))
    # 5/6 is reached at t=.8 and t=.4: ties go to the highest threshold.
    assert best.threshold == 0.8
    c = best.confusion
    assert (c.tp, c.fp, c.tn, c.fn) == (2, 0, 3, 1)
    assert c.accuracy == pytest.approx(5 / 6)
    assert c.precision == 1.0  # 2 / (2 + 0)
    assert c.recall == pytest.approx(2 / 3)  # 2 / 3
    assert c.f1 == pytest.approx(0.8)  # 2 * 1 * 2/3 / (1 + 2/3)


def test_roc_auc_hand_case_and_sklearn():
    # Pairs (paraphrase, non-paraphrase) ordered correctly: .9 beats 3, .8 beats 3, .4 beats 2 -> 8/9.
    r = rank(A_SCORES, A_LABELS)
    assert roc_auc(r) == pytest.approx(8 / 9)
    assert roc_auc(r) == pytest.approx(roc_auc_score(A_LABELS, A_SCORES))
    fpr, tpr = roc(r)
    assert fpr.tolist() == pytest.approx([0, 0, 0, 1 / 3, 1 / 3, 2 / 3, 1])
    assert tpr.tolist() == pytest.approx([0, 1 / 3, 2 / 3, 2 / 3, 1, 1, 1])


def test_equal_error_rate_exact_crossing():
    # At t=.7: FAR = 1/3 (one of three non-paraphrases accepted), FRR = 1/3 (.4 rejected).
    eer = equal_error_rate(rank(A_SCORES, A_LABELS))
    assert eer.rate == pytest.approx(1 / 3)
    assert eer.threshold == 0.7


def test_equal_error_rate_interpolated():
    # Paraphrases 3, 1; non-paraphrases 2. Points (FAR, FRR): none (0, 1), t=3 (0, .5),
    # t=2 (1, .5), t=1 (1, 0).
    # FRR - FAR: 1, .5, -.5 -> between t=3 and t=2, weight .5/(.5+.5) = .5, EER = 0 + .5*1 = .5;
    # nearest operating point: weight .5 is not < .5 -> the later one, t=2.
    eer = equal_error_rate(rank([3.0, 1.0, 2.0], [True, True, False]))
    assert eer.rate == pytest.approx(0.5)
    assert eer.threshold == 2.0


def test_at_threshold_counts():
    # Natural threshold .5: .9, .8, .7 called paraphrases -> tp 2, fp 1, fn 1 (.4), tn 2.
    c = at_threshold(np.array(A_SCORES), np.array(A_LABELS), 0.5)
    assert (c.tp, c.fp, c.tn, c.fn) == (2, 1, 2, 1)
    assert c.accuracy == pytest.approx(4 / 6)
    assert c.f1 == pytest.approx(2 / 3)  # 2*2 / (2*2 + 1 + 1)


def test_rank_curves_hand_case():
    curves = rank_curves(rank(A_SCORES, A_LABELS))
    # tp by k: 0 1 2 2 3 3 3; accuracy = (tp + 3 - (k - tp)) / 6; F1 = 2 tp / (k + 3).
    assert curves.true_positives.tolist() == [0, 1, 2, 2, 3, 3, 3]
    assert curves.accuracy.tolist() == pytest.approx([3 / 6, 4 / 6, 5 / 6, 4 / 6, 5 / 6, 4 / 6, 3 / 6])
    assert curves.f1.tolist() == pytest.approx([0, 2 / 4, 4 / 5, 4 / 6, 6 / 7, 6 / 8, 6 / 9])
    best = int(np.argmax(curves.f1))
    assert best == 4 and curves.recall[best] == 1.0 and curves.precision[best] == pytest.approx(0.75)


# Case B, ties. Paraphrases 1, 1, 0; non-paraphrases 1, 0, 0. Tie groups: {1: P P N}, {0: P N N}.
B_SCORES = [1.0, 1.0, 0.0, 1.0, 0.0, 0.0]
B_LABELS = [True, True, True, False, False, False]


def test_ties_form_one_operating_point():
    r = rank(B_SCORES, B_LABELS)
    assert r.thresholds.tolist() == [1.0, 0.0]
    assert r.tp.tolist() == [2, 3] and r.fp.tolist() == [1, 3]
    best = best_accuracy(r)  # none: 3/6; t=1: (2 + 2)/6; t=0: 3/6
    assert best.threshold == 1.0 and best.confusion.accuracy == pytest.approx(4 / 6)


def test_ties_count_half_in_auc():
    # P(1) vs N(1): 1/2 each (x2); P(1) vs N(0): 1 each (x4); P(0) vs N(1): 0; P(0) vs N(0): 1/2 (x2)
    # -> (1 + 4 + 1) / 9 = 2/3; equals the trapezoids (0,0)-(1/3,2/3)-(1,1): 1/9 + 5/9.
    r = rank(B_SCORES, B_LABELS)
    assert roc_auc(r) == pytest.approx(2 / 3)
    assert roc_auc(r) == pytest.approx(roc_auc_score(B_LABELS, B_SCORES))
    eer = equal_error_rate(r)  # t=1: FAR 1/3, FRR 1/3
    assert eer.rate == pytest.approx(1 / 3) and eer.threshold == 1.0


def test_rank_curves_expect_random_order_inside_ties():
    # The first tie group (3 pairs, 2 paraphrases) adds 2/3 paraphrase per rank on average.
    curves = rank_curves(rank(B_SCORES, B_LABELS))
    assert curves.true_positives.tolist() == pytest.approx([0, 2 / 3, 4 / 3, 2, 7 / 3, 8 / 3, 3])


def test_single_class_leaves_auc_and_eer_undefined():
    r = rank([0.2, 0.5, 0.9], [True, True, True])
    assert not r.both_classes
    assert roc_auc(r) is None
    assert equal_error_rate(r) is None
    assert roc(r) is None
    # Accuracy is still defined: call everything a paraphrase.
    best = best_accuracy(r)
    assert best.confusion.accuracy == 1.0 and best.threshold == 0.2


def test_all_scores_equal():
    # One tie group: the sweep can only accept all (acc 2/4) or none (2/4); AUC 1/2;
    # EER between (0, 1) and (1, 0) is 1/2.
    r = rank([0.5] * 4, [True, False, True, False])
    assert best_accuracy(r).confusion.accuracy == 0.5
    assert best_accuracy(r).threshold is None  # ties -> the first (highest) point: accept none
    assert roc_auc(r) == 0.5
    assert equal_error_rate(r).rate == 0.5


def test_no_pairs():
    r = rank([], [])
    assert best_accuracy(r) is None
    assert roc_auc(r) is None
    assert rank_curves(r) is None


def test_rank_refuses_nan_and_mismatched_lengths():
    with pytest.raises(ValueError, match="finite"):
        rank([0.1, float("nan")], [True, False])
    with pytest.raises(ValueError, match="same length"):
        rank([0.1, 0.2], [True])


def test_random_cases_agree_with_scikit_learn():
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(2, 40))
        labels = rng.random(n) < 0.5
        if labels.all() or not labels.any():
            continue
        scores = np.round(rng.normal(size=n) + labels, 1)  # rounding makes ties
        assert roc_auc(rank(scores, labels)) == pytest.approx(roc_auc_score(labels, scores))


def test_class_summary_and_box_stats():
    # mean of 1, 2, 3, 4, 100 = 22; sample std = sqrt(sum((x-22)^2)/4) = sqrt(7610/4) = 43.617...
    summary = class_summary(np.array([1.0, 2.0, 3.0, 4.0, 100.0]))
    assert summary.mean == 22.0 and summary.std == pytest.approx((7610 / 4) ** 0.5) and summary.n == 5
    assert class_summary(np.array([3.0])).std is None
    assert class_summary(np.array([])).mean is None
    # Quartiles (linear): 2, 3, 4; IQR 2; fences -1 and 7: 100 is an outlier, whiskers 1 and 4.
    box = box_stats(np.array([1.0, 2.0, 3.0, 4.0, 100.0]))
    assert (box.q1, box.median, box.q3) == (2.0, 3.0, 4.0)
    assert (box.whisker_min, box.whisker_max) == (1.0, 4.0)
    assert box.outliers == [100.0]


def test_downsample_keeps_ends():
    assert downsample_indices(5, 10).tolist() == [0, 1, 2, 3, 4]
    kept = downsample_indices(1001, 11)
    assert kept[0] == 0 and kept[-1] == 1000 and len(kept) == 11
