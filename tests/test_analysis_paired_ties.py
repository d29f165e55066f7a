"""Spearman and Kendall paired tests on tied data.

The Spearman permutation swaps each metric's mid-ranks without re-ranking (the reason is in
``paired._per_pair_values`` and docs/explanation/statistics-paired-tests.md); these tests pin that choice
against scipy on heavily tied data and show what the alternative would do."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scoring.analysis import paired as P


def _input(a, b, human):
    n = len(human)
    empty = np.full((2, n), np.nan)
    binary = (np.asarray(human) >= 2.5).astype(np.int8)
    return P.PairedInput([1, 2], np.vstack([a, b]).astype(float), binary, np.asarray(human, float), empty, empty)


def _spearman(a, b, human, resamples=5000, seed=3):
    options = P.PairedOptions(
        resamples=500, seed=seed, statistics=(P.Statistic.SPEARMAN,), permutation_resamples=resamples
    )
    (test,) = P.compare(_input(a, b, human), options)
    return test


def _bleu_like(n, seed):
    """Two BLEU-like metrics on one scale with many zeros (the second a little stricter)."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(0, 1, n)
    human = np.clip(np.round(2.5 + latent[:, None] + rng.normal(0, 0.7, (n, 3))), 1, 4).mean(axis=1)
    base = latent + rng.normal(0, 1, n)
    a = np.maximum(0, np.round(base - 0.3, 2))
    b = np.maximum(0, np.round(base - 0.45 + rng.normal(0, 0.1, n), 2))
    return a, b, human


def _pearson_rows(x, h, axis=-1):
    x = x - x.mean(axis=axis, keepdims=True)
    h = h - h.mean()
    return (x * h).sum(axis=axis) / np.sqrt((x * x).sum(axis=axis) * (h * h).sum())


def test_exact_spearman_permutation_on_tied_data_matches_scipy():
    # 12 pairs, half the scores 0: 4,096 swap patterns, all enumerated by both.
    a = np.array([0, 0, 0, 0, 0, 0, 0.2, 0.4, 0.4, 0.7, 0.9, 1.0])
    b = np.array([0, 0, 0, 0.1, 0, 0.3, 0, 0.3, 0.5, 0.5, 0.8, 0.8])
    human = np.array([1, 1.5, 2, 1, 2.5, 3, 2, 3, 3, 4, 3.5, 4])
    test = _spearman(a, b, human)
    assert test.permutation_exact and test.permutation_resamples == 4096
    rh = stats.rankdata(human)
    reference = stats.permutation_test(
        (stats.rankdata(a), stats.rankdata(b)),
        lambda x, y, axis=-1: _pearson_rows(x, rh, axis) - _pearson_rows(y, rh, axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,
    )
    assert test.p_permutation == pytest.approx(reference.pvalue, abs=1e-12)
    expected = stats.spearmanr(a, human).statistic - stats.spearmanr(b, human).statistic
    assert test.difference == pytest.approx(expected)


def test_without_reranking_agrees_with_reranked_raw_scores_and_bootstrap():
    a, b, human = _bleu_like(1000, 0)
    assert (a == 0).mean() > 0.55 and (b == 0).mean() > 0.6
    test = _spearman(a, b, human)
    rh = stats.rankdata(human)

    def reranked(x, y, axis=-1):
        return _pearson_rows(stats.rankdata(x, axis=axis), rh, axis) - _pearson_rows(
            stats.rankdata(y, axis=axis), rh, axis
        )

    def scipy_p(x, y):
        return stats.permutation_test(
            (x, y), reranked, permutation_type="samples", vectorized=True, n_resamples=1000, random_state=1
        ).pvalue

    # Same scale: re-ranking the swapped *raw* scores is meaningful, and agrees with ours.
    assert test.p_permutation < 0.01 and scipy_p(a, b) < 0.01 and test.p_bootstrap < 0.01
    # Re-ranking swapped mid-ranks of two metrics splits their zero blocks and loses the signal.
    assert scipy_p(stats.rankdata(a) / 1000, stats.rankdata(b) / 1000) > 0.05


def test_exchangeable_tied_metrics_are_rejected_at_about_alpha():
    rejections = 0
    for seed in range(120):
        rng = np.random.default_rng(500 + seed)
        latent = rng.normal(0, 1, 150)
        human = np.clip(np.round(2.5 + latent), 1, 4)
        a = np.maximum(0, np.round(latent + rng.normal(0, 1, 150) - 0.3, 1))
        b = np.maximum(0, np.round(latent + rng.normal(0, 1, 150) - 0.3, 1))
        rejections += _spearman(a, b, human, resamples=400, seed=seed).p_permutation < 0.05
    assert 1 <= rejections <= 14  # 6 expected


def test_identical_and_monotone_tied_metrics_are_never_separated():
    a, _, human = _bleu_like(400, 2)
    for other in (a.copy(), np.sqrt(a) * 10):  # same ties, same order
        test = _spearman(a, other, human, resamples=999)
        assert test.difference == 0 and test.p_permutation == 1.0


def test_kendall_jackknife_on_tied_data_is_exact_tau_b():
    a, b, human = _bleu_like(120, 4)
    tau, leave = P.kendall_jackknife(a, human)
    assert tau == pytest.approx(stats.kendalltau(a, human, variant="b").statistic)
    for i in (0, 5, 77):
        keep = np.arange(120) != i
        assert leave[i] == pytest.approx(stats.kendalltau(a[keep], human[keep], variant="b").statistic)
    (test,) = P.compare(_input(a, b, human), P.PairedOptions(resamples=200, statistics=(P.Statistic.KENDALL,)))
    expected = stats.kendalltau(a, human, variant="b").statistic - stats.kendalltau(b, human, variant="b").statistic
    assert test.difference == pytest.approx(expected) and test.p_value == test.p_jackknife
