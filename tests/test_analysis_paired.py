"""Paired metric comparisons checked against SciPy, scikit-learn and published values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from scoring.analysis import paired as P


def _input(scores, human, binary=None, natural=None, cv=None):
    scores = np.asarray(scores, dtype=float)
    m, n = scores.shape
    human = np.asarray(human, dtype=float)
    binary = (human >= 2.5).astype(np.int8) if binary is None else np.asarray(binary, dtype=np.int8)
    empty = np.full((m, n), np.nan)
    return P.PairedInput(
        list(range(1, m + 1)),
        scores,
        binary,
        human,
        empty if natural is None else np.asarray(natural, float),
        empty if cv is None else np.asarray(cv, float),
    )


def _noisy(n=300, seed=1):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 5, n).astype(float)
    return human, np.vstack([human + rng.normal(0, 0.7, n), rng.normal(0, 1, n)])


def test_exact_permutation_matches_scipy_permutation_test():
    # 8 pairs, 256 swap patterns <= resamples: both enumerate every pattern (exact test).
    rng = np.random.default_rng(3)
    human = np.array([1, 2, 2, 3, 4, 1, 3, 4], dtype=float)
    a = human + rng.normal(0, 0.5, 8)
    b = rng.normal(0, 1, 8)
    tests = P.compare(_input([a, b], human), P.PairedOptions(resamples=1000, statistics=(P.Statistic.PEARSON,)))
    za, zb = (a - a.mean()) / a.std(), (b - b.mean()) / b.std()

    def statistic(x, y, axis=-1):
        return stats.pearsonr(x, human, axis=axis).statistic - stats.pearsonr(y, human, axis=axis).statistic

    reference = stats.permutation_test(
        (za, zb), statistic, permutation_type="samples", vectorized=True, n_resamples=10_000
    )
    assert tests[0].p_permutation == pytest.approx(reference.pvalue, abs=1e-12)
    assert tests[0].difference == pytest.approx(stats.pearsonr(a, human)[0] - stats.pearsonr(b, human)[0])


def test_observed_values_match_scipy_and_sklearn():
    human, scores = _noisy()
    binary = (human >= 3).astype(np.int8)
    tests = P.compare(_input(scores, human, binary), P.PairedOptions(resamples=200))
    by = {t.statistic: t for t in tests}
    assert by[P.Statistic.AUC].value_a == pytest.approx(roc_auc_score(binary, scores[0]))
    assert by[P.Statistic.SPEARMAN].value_a == pytest.approx(stats.spearmanr(scores[0], human)[0])
    assert by[P.Statistic.KENDALL].value_b == pytest.approx(stats.kendalltau(scores[1], human, variant="b")[0])
    assert by[P.Statistic.PEARSON].value_a == pytest.approx(stats.pearsonr(scores[0], human)[0])


def test_bootstrap_resample_statistics_match_scipy_on_expanded_data():
    human, scores = _noisy(120)
    binary = human >= 3
    counts = next(P.count_blocks(120, 4, seed=5))
    order = P._sorted(scores[0])
    auc = P._auc_sorted(counts[:, order.order], order, binary)
    rho = P._spearman_sorted(counts[:, order.order], order, P._midranks(counts, P._sorted(human)), 120)
    for row in range(4):
        idx = np.repeat(np.arange(120), counts[row].astype(int))
        assert auc[row] == pytest.approx(roc_auc_score(binary[idx], scores[0][idx]))
        assert rho[row] == pytest.approx(stats.spearmanr(scores[0][idx], human[idx])[0])


def test_kendall_jackknife_leave_one_out_is_exact():
    human, scores = _noisy(40)
    tau, leave = P.kendall_jackknife(scores[0], human)
    assert tau == pytest.approx(stats.kendalltau(scores[0], human, variant="b")[0])
    for i in (0, 7, 39):
        keep = np.arange(40) != i
        assert leave[i] == pytest.approx(stats.kendalltau(scores[0][keep], human[keep], variant="b")[0])


def test_williams_worked_example():
    # Howell, Statistical Methods for Psychology (6th ed., p. 262), also the worked example of
    # Bruce Weaver's SPSS Williams1959.sps: r12 = .80, r13 = .72, r23 = .89, n = 26 -> t = 1.361, p = .187 (23 df).
    t, p = P.williams_test(0.80, 0.72, 0.89, 26)
    assert round(t, 3) == 1.361
    assert round(p, 3) == 0.187


def test_holm_textbook_example():
    assert P.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert P.holm([None, 0.5]) == [None, 0.5]


def test_noisy_copy_beats_random_metric_and_identical_metrics_never_differ():
    human, scores = _noisy(300)
    identical = np.vstack([scores[0], scores[0], scores[1]])
    tests = P.compare(_input(identical, human), P.PairedOptions(resamples=500))
    for test in tests:
        if test.reason:
            continue
        if (test.metric_a, test.metric_b) == (1, 2):
            assert test.difference == 0 and test.p_value == 1.0 and test.p_holm == 1.0
        if (test.metric_a, test.metric_b) == (1, 3):
            assert test.difference > 0 and test.p_holm is not None and test.p_holm < 0.05, test


def test_all_tied_and_single_class_give_reasons():
    human = np.array([2.0, 2.0, 2.0, 2.0])
    tests = P.compare(_input([[1, 2, 3, 4], [4, 3, 2, 1]], human, binary=[1, 1, 1, 1]), P.PairedOptions(resamples=50))
    reasons = {t.statistic: t.reason for t in tests}
    assert reasons[P.Statistic.AUC] == "one class only"
    assert reasons[P.Statistic.PEARSON] == "the human scale is constant"
    assert reasons[P.Statistic.ACCURACY_NATURAL] == "both metrics need a natural threshold"


def test_seeded_and_reproducible():
    human, scores = _noisy(100)
    first = P.compare(_input(scores, human), P.PairedOptions(resamples=300, seed=9))
    second = P.compare(_input(scores, human), P.PairedOptions(resamples=300, seed=9))
    assert first == second
