"""The vectorised bootstrap against an explicit recomputation of every resample."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.analysis.binary import best_accuracy, equal_error_rate, rank, roc_auc
from scoring.analysis.bootstrap import (
    Resampler,
    bootstrap,
    bootstrap_many,
    full_sample_statistics,
    resample_statistics,
)


def _random_case(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = rng.random(n) < 0.6
    scores = np.round(rng.normal(size=n) + labels, 1)  # rounding makes mixed tie groups
    return scores, labels


@pytest.mark.parametrize("seed", range(30))
def test_full_sample_equals_direct_statistics(seed):
    scores, labels = _random_case(seed, int(np.random.default_rng(seed).integers(2, 50)))
    r = rank(scores, labels)
    accuracy, auc, eer = full_sample_statistics(r)
    assert accuracy == pytest.approx(best_accuracy(r).confusion.accuracy, abs=1e-12)
    if r.both_classes:
        assert auc == pytest.approx(roc_auc(r), abs=1e-12)
        assert eer == pytest.approx(equal_error_rate(r).rate, abs=1e-12)


def test_every_resample_equals_an_explicit_recomputation():
    scores, labels = _random_case(11, 40)
    r = rank(scores, labels)
    resampler = Resampler(resamples=60, seed=5)
    accuracy, auc, eer = resample_statistics(r, resampler)
    counts = np.diff(resampler.cumulative_counts(r.n), axis=1)
    assert counts.sum(axis=1).tolist() == [r.n] * 60  # every resample draws n pairs
    for row in range(60):
        # The resample itself: each sorted pair repeated as often as it was drawn, and the
        # best threshold chosen again on it.
        drawn = rank(np.repeat(r.scores, counts[row]), np.repeat(r.labels, counts[row]))
        assert accuracy[row] == pytest.approx(best_accuracy(drawn).confusion.accuracy, abs=1e-12)
        if drawn.both_classes:
            assert auc[row] == pytest.approx(roc_auc(drawn), abs=1e-12)
            assert eer[row] == pytest.approx(equal_error_rate(drawn).rate, abs=1e-12)
        else:
            assert np.isnan(auc[row]) and np.isnan(eer[row])


def test_unscored_pairs_are_drawn_and_dropped():
    # 30 scored pairs among 36 labelled ones: a resample draws 36 pairs from all 36 and keeps
    # those with a score, so its size varies; each statistic is computed on what it kept.
    scores, labels = _random_case(12, 30)
    r = rank(scores, labels)
    resampler = Resampler(resamples=40, seed=8)
    accuracy, auc, _ = resample_statistics(r, resampler, drawn_from=36)
    counts = np.diff(resampler.cumulative_counts(36), axis=1)[:, :30]  # draws on scored positions
    assert len(set(counts.sum(axis=1).tolist())) > 1  # the kept size varies between resamples
    for row in range(40):
        kept = rank(np.repeat(r.scores, counts[row]), np.repeat(r.labels, counts[row]))
        assert accuracy[row] == pytest.approx(best_accuracy(kept).confusion.accuracy, abs=1e-12)
        if kept.both_classes:
            assert auc[row] == pytest.approx(roc_auc(kept), abs=1e-12)
    with pytest.raises(ValueError, match="smaller than"):
        resample_statistics(r, resampler, drawn_from=10)


def test_intervals_are_reproducible_and_sensible():
    scores, labels = _random_case(2, 300)
    r = rank(scores, labels)
    first = bootstrap(r, Resampler(400, seed=1))
    again = bootstrap(r, Resampler(400, seed=1))
    other = bootstrap(r, Resampler(400, seed=2))
    assert first == again
    assert first != other
    assert first.resamples == 400 and first.single_class_resamples == 0
    # The AUC and EER intervals cover their point estimates; the accuracy interval of a
    # re-optimised threshold covers the estimate too (it sits above it, optimism included).
    assert first.auc.low < roc_auc(r) < first.auc.high
    assert first.eer.low < equal_error_rate(r).rate < first.eer.high
    assert first.accuracy.low <= best_accuracy(r).confusion.accuracy <= first.accuracy.high
    assert 0 < first.auc.high - first.auc.low < 0.2


def test_counts_are_drawn_in_chunks_of_the_same_stream():
    resampler = Resampler(10, seed=3)
    whole = resampler.cumulative_counts(7)
    assert whole.shape == (10, 8)
    assert np.array_equal(whole, resampler.cumulative_counts(7))  # seeded per sample size
    # Chunks of 3 resamples: 3 + 3 + 3 + 1 rows, the very same draws as one table.
    blocks = list(resampler.chunks(7, rows=3))
    assert [block.shape for block in blocks] == [(3, 8), (3, 8), (3, 8), (1, 8)]
    assert np.array_equal(np.concatenate(blocks), whole)


def test_many_jobs_equal_one_at_a_time():
    # bootstrap_many reads each chunk for every job of its sample size: the same intervals as
    # one bootstrap per job (which draws the counts again for each).
    cases = [rank(*_random_case(seed, 40)) for seed in (21, 22, 23)]
    resampler = Resampler(150, seed=9)
    jobs = [(cases[0], None), (cases[1], 45), (cases[2], None), (rank([0.5], [True]), None)]
    together = bootstrap_many(jobs, resampler)
    assert together == [bootstrap(r, resampler, drawn_from=drawn) for r, drawn in jobs]
    assert together[3] is None and together[0] is not None


def test_single_class_and_tiny_samples():
    one_class = rank([0.1, 0.4, 0.3], [True, True, True])
    result = bootstrap(one_class, Resampler(50))
    assert result.auc is None and result.eer is None
    assert result.accuracy.low == result.accuracy.high == 1.0
    assert bootstrap(rank([0.5], [True]), Resampler(50)) is None


def test_resamples_with_one_class_are_counted():
    # 1 paraphrase in 5 pairs: a resample misses it with probability (4/5)^5 = 0.33.
    result = bootstrap(rank([0.9, 0.1, 0.2, 0.3, 0.4], [True, False, False, False, False]), Resampler(300, seed=4))
    assert 60 < result.single_class_resamples < 140


def test_bad_arguments():
    with pytest.raises(ValueError, match="resamples"):
        Resampler(0)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap(rank([0.1, 0.2], [True, False]), Resampler(5), confidence=1.5)
