"""ΔROC-AUC between two metrics on the same pairs: DeLong's test and the paired permutation that
swaps the two metrics' percentile ranks and recomputes both AUCs.

Checked against scipy's ``permutation_test`` (exact enumeration), scikit-learn's AUC on every
swap pattern, and a DeLong written here from the 1988 paper's placement values; power on data
whose answer is known.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from scoring.analysis import paired as P


def _input(scores, binary):
    scores = np.asarray(scores, dtype=float)
    m, n = scores.shape
    empty = np.full((m, n), np.nan)
    graded = np.asarray(binary, dtype=float) * 3 + 1
    return P.PairedInput(list(range(1, m + 1)), scores, np.asarray(binary, np.int8), graded, empty, empty)


def _auc_options(resamples=1000, seed=7):
    return P.PairedOptions(resamples=resamples, seed=seed, statistics=(P.Statistic.AUC,))


def _delong_1988(x, y, positive):
    """DeLong, DeLong & Clarke-Pearson (1988), written from the paper: placement values from the
    full positive x negative kernel, covariance of the two AUCs, normal z for the difference."""
    placements = []
    for s in (x, y):
        pos, neg = s[positive], s[~positive]
        kernel = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
        placements.append((kernel.mean(axis=1), kernel.mean(axis=0)))
    v10 = np.vstack([placements[0][0], placements[1][0]])
    v01 = np.vstack([placements[0][1], placements[1][1]])
    s = np.cov(v10) / v10.shape[1] + np.cov(v01) / v01.shape[1]
    contrast = np.array([1.0, -1.0])
    difference = v10[0].mean() - v10[1].mean()
    z = difference / np.sqrt(contrast @ s @ contrast)
    return difference, 2 * stats.norm.sf(abs(z))


def _latent(n, seed, signal=0.5):
    """A human latent scale; the label is its sign. A: noisy copy; B: ``signal`` times the
    signal (half by default), same noise."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(0, 1, n)
    binary = (latent > 0).astype(np.int8)
    a = latent + rng.normal(0, 1, n)
    b = signal * latent + rng.normal(0, 1, n)
    return binary, a, b


def test_swap_contributions_equal_both_aucs_recomputed_on_every_swap():
    rng = np.random.default_rng(1)
    n = 40
    positive = rng.random(n) < 0.4
    # Many ties inside each metric and across them (rounded scores).
    a = np.round(rng.normal(0, 1, n) + positive, 1)
    b = np.round(rng.normal(0, 1, n), 0)
    u, v = stats.rankdata(a) / n, stats.rankdata(b) / n
    c = P.auc_swap_contributions(u, v, positive)
    for _ in range(25):
        keep = rng.random(n) < 0.5
        a_swapped, b_swapped = np.where(keep, u, v), np.where(keep, v, u)
        expected = roc_auc_score(positive, a_swapped) - roc_auc_score(positive, b_swapped)
        assert np.where(keep, 1.0, -1.0) @ c == pytest.approx(expected, abs=1e-12)
    assert c.sum() == pytest.approx(roc_auc_score(positive, a) - roc_auc_score(positive, b), abs=1e-12)


@pytest.mark.parametrize("seed", [3, 4, 5, 6])
def test_exact_auc_permutation_matches_scipy_permutation_test(seed):
    # 10 pairs, 1,024 swap patterns <= resamples: both enumerate every pattern.
    rng = np.random.default_rng(seed)
    binary = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 0], dtype=np.int8)
    a = binary + rng.normal(0, 0.6, 10)
    b = np.round(rng.normal(0, 1, 10), 1)
    (test,) = P.compare(_input([a, b], binary), _auc_options(resamples=2000))
    positive = binary == 1

    def auc(x):  # vectorised Mann-Whitney AUC along the last axis, ties 1/2
        pos, neg = x[..., positive], x[..., ~positive]
        kernel = (pos[..., :, None] > neg[..., None, :]) + 0.5 * (pos[..., :, None] == neg[..., None, :])
        return kernel.mean(axis=(-1, -2))

    reference = stats.permutation_test(
        (stats.rankdata(a) / 10, stats.rankdata(b) / 10),
        lambda x, y, axis=-1: auc(x) - auc(y),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,
    )
    assert test.p_permutation == pytest.approx(reference.pvalue, abs=1e-12)
    assert test.difference == pytest.approx(roc_auc_score(binary, a) - roc_auc_score(binary, b))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_delong_matches_the_1988_formula_and_sklearn(seed):
    binary, a, b = _latent(300, seed)
    b = np.round(b, 1)  # ties in one metric
    (test,) = P.compare(_input([a, b], binary), _auc_options(resamples=200))
    difference, p = _delong_1988(a, b, binary == 1)
    assert test.value_a == pytest.approx(roc_auc_score(binary, a))
    assert test.value_b == pytest.approx(roc_auc_score(binary, b))
    assert test.difference == pytest.approx(difference)
    assert test.p_delong == pytest.approx(p, rel=1e-9)
    assert test.p_value == test.p_delong  # DeLong is the analytic default for ROC AUC


def test_permutation_null_spread_equals_delongs_standard_error():
    # The bug a review found: permuting a linearised rank statistic gave a null ~1.9x too wide.
    binary, a, b = _latent(2000, 5)
    positive = binary == 1
    u, v = stats.rankdata(a) / 2000, stats.rankdata(b) / 2000
    c = P.auc_swap_contributions(u, v, positive)
    null = np.concatenate(list(P.sign_blocks(2000, 2000, seed=11))) @ c
    _, se, _ = P.delong_test(P.delong_components(a, positive), P.delong_components(b, positive))
    assert null.std() == pytest.approx(se, rel=0.1)


@pytest.mark.parametrize(("n", "signal"), [(500, 0.5), (1000, 0.7), (2000, 0.8)])
def test_noisy_copy_separated_from_weaker_signal_identical_never(n, signal):
    # (2000, 0.8): AUC difference 0.030; DeLong p = 0.012, the correct permutation 0.009, while
    # the old linearised permutation gave 0.10 (1000, 0.7: 0.041 against 0.002).
    binary, a, b = _latent(n, 8, signal)
    scores = np.vstack([a, b, a])
    tests = {(t.metric_a, t.metric_b): t for t in P.compare(_input(scores, binary), _auc_options())}
    better = tests[(1, 2)]
    assert better.difference > 0
    assert better.p_delong < 0.02 and better.p_permutation < 0.02 and better.p_holm < 0.05, better
    same = tests[(1, 3)]
    assert same.difference == 0 and same.p_delong == 1.0 and same.p_permutation == 1.0 and same.p_holm == 1.0


def test_identical_metrics_never_separated_over_many_samples():
    for seed in range(10):
        binary, a, _ = _latent(200, 100 + seed)
        monotone = np.exp(a)  # the same ranking on another scale
        (test,) = P.compare(_input([a, monotone], binary), _auc_options(resamples=200, seed=seed))
        assert test.p_delong == 1.0 and test.p_permutation == 1.0


def test_false_positive_rate_of_delong_at_alpha():
    # Two metrics with the same signal (different noise): DeLong rejects about 5% at alpha .05.
    rejections = 0
    for seed in range(200):
        rng = np.random.default_rng(1000 + seed)
        latent = rng.normal(0, 1, 200)
        positive = latent > 0
        a, b = latent + rng.normal(0, 1, 200), latent + rng.normal(0, 1, 200)
        _, _, p = P.delong_test(P.delong_components(a, positive), P.delong_components(b, positive))
        rejections += p < 0.05
    assert 2 <= rejections <= 20
