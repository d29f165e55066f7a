"""Clusters that can separate: analytic tests where they exist, Monte-Carlo
resamples chosen from the number of comparisons, the smallest reachable p beside each matrix."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scoring.analysis import paired as P
from scoring.analysis.labels import LABEL_CODES
from scoring.analysis.meta import MetaOptions, meta_evaluation
from scoring.analysis.report import AnalysisInput, JudgementRows, MetricInfo, VolunteerInfo
from scoring.reports.meta_tables import meta_tables

SCALE = ["very_different", "slightly_similar", "mostly_similar", "same_meaning"]


def campaign(n=800, metrics=8, seed=3, judges=3):
    """n pairs judged by ``judges`` volunteers on the 4-point scale from a latent meaning
    similarity; metric k = latent + noise, its signal shrinking with k (metric 1 the best)."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(0, 1, n)
    rows = []
    for pair in range(n):
        for judge in range(judges):
            level = int(np.clip(np.round(1.5 + latent[pair] + rng.normal(0, 0.6)), 0, 3))
            rows.append((pair, 100 + judge, LABEL_CODES[SCALE[level]]))
    judgements = JudgementRows(
        pair_index=np.array([r[0] for r in rows], dtype=np.int64),
        volunteer=np.array([r[1] for r in rows], dtype=np.int64),
        code=np.array([r[2] for r in rows], dtype=np.int64),
        answered_at=np.arange(len(rows), dtype=np.float64),
        response_seconds=np.full(len(rows), 4.0),
    )
    signal = [1.0 - 0.12 * k for k in range(metrics)]
    scores = np.vstack([s * latent + rng.normal(0, 0.6, n) for s in signal])
    infos = [MetricInfo(k + 1, f"m{k + 1}", f"M{k + 1}", higher_is_closer=True) for k in range(metrics)]
    nan = np.full(n, np.nan)
    return AnalysisInput(
        pair_ids=np.arange(n),
        origins=["x"] * n,
        edit_distance=np.zeros(n),
        gold_label=nan,
        gold_score=nan,
        judgements=judgements,
        volunteers=[VolunteerInfo(100 + j, "native", 5, 5) for j in range(judges)],
        metrics=infos,
        scores=scores,
        failed=np.zeros_like(scores, dtype=bool),
    )


def test_resamples_for_reaches_alpha_over_five_after_holm():
    assert P.resamples_for(28, 0.05) == 5599
    assert 28 * P.smallest_p(5599) == pytest.approx(0.01)
    assert 55 * P.smallest_p(P.resamples_for(55, 0.05)) <= 0.01
    # The figure a review found: at 1,000 resamples the smallest Holm-adjusted p over 28 is 0.056.
    assert 28 * P.smallest_p(1000) == pytest.approx(0.0559, abs=1e-4)
    assert P.smallest_p(256, exact=True) == 2 / 256


def test_exact_mcnemar_is_the_exact_permutation_of_correctness():
    rng = np.random.default_rng(2)
    for _ in range(5):
        u = (rng.random(12) < 0.7).astype(float)
        v = (rng.random(12) < 0.5).astype(float)
        reference = stats.permutation_test(
            (u, v),
            lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=10_000,
        )
        assert P.mcnemar_exact(u, v) == pytest.approx(reference.pvalue, abs=1e-12)
        b, c = int(((u == 1) & (v == 0)).sum()), int(((u == 0) & (v == 1)).sum())
        if b + c:
            assert P.mcnemar_exact(u, v) == pytest.approx(stats.binomtest(b, b + c).pvalue, abs=1e-12)


def test_eight_metrics_separate_into_several_clusters_on_every_statistic():
    meta = meta_evaluation(campaign(), MetaOptions(resamples=200))
    by = {ranking.statistic: ranking for ranking in meta.rankings}
    for statistic in (
        P.Statistic.AUC,
        P.Statistic.ACCURACY_CV,
        P.Statistic.PEARSON,
        P.Statistic.SPEARMAN,
        P.Statistic.KENDALL,
    ):
        ranking = by[statistic]
        clusters = {row.rank for row in ranking.rows}
        assert len(clusters) >= 3, (statistic, [(r.metric, r.rank) for r in ranking.rows])
        best, worst = ranking.rows[0], ranking.rows[-1]
        assert best.metric in (1, 2) and worst.metric == 8 and best.rank == 1 and best.metric in worst.beaten_by
    spearman = by[P.Statistic.SPEARMAN]
    assert spearman.test == "permutation" and spearman.comparisons == 28 and spearman.resamples == 5599
    assert spearman.smallest_p == pytest.approx(28 * 2 / 5600) and spearman.reachable
    assert spearman.floor_note == (
        "Permutation test, 5599 resamples: the smallest reachable Holm-adjusted p over 28 comparisons is 0.01."
    )
    assert by[P.Statistic.AUC].test == "DeLong" and by[P.Statistic.AUC].smallest_p is None
    assert by[P.Statistic.PEARSON].test == "Williams" and by[P.Statistic.KENDALL].test == "jackknife"
    assert by[P.Statistic.AUC].floor_note == "DeLong test (analytic): no resampling floor on its p-values."


def test_too_few_resamples_is_said_with_how_many_are_needed():
    meta = meta_evaluation(campaign(n=300), MetaOptions(resamples=100, permutation_resamples=1000))
    (spearman,) = [r for r in meta.rankings if r.statistic is P.Statistic.SPEARMAN]
    assert not spearman.reachable and spearman.resamples == 1000
    assert spearman.floor_note == (
        "Permutation test, 1000 resamples: the smallest reachable Holm-adjusted p over 28 comparisons is 0.0559. "
        "No difference can reach p < 0.05: raise the permutation resamples to at least 5599 (5.6 x)."
    )
    tables = {table.key: table for table in meta_tables(meta)}
    assert spearman.floor_note in tables["meta_matrix_spearman"].caption
    assert spearman.floor_note in tables["meta_rank_spearman"].caption
    # Every Spearman comparison is then at the floor or above: one cluster.
    assert {row.rank for row in spearman.rows} == {1}


def test_identical_metrics_share_a_cluster_on_every_statistic():
    data = campaign(n=400, metrics=3)
    data.scores[1] = data.scores[0] * 2 + 1  # the same ranking on another scale
    # Natural thresholds at the same point of both scales, so the natural accuracy is ranked too.
    data.metrics[0:2] = [
        MetricInfo(1, "m1", "M1", higher_is_closer=True, natural_threshold=0.0),
        MetricInfo(2, "m2", "M2", higher_is_closer=True, natural_threshold=1.0),
    ]
    data.metrics[2] = MetricInfo(3, "m3", "M3", higher_is_closer=True, natural_threshold=0.0)
    meta = meta_evaluation(data, MetaOptions(resamples=200))
    assert {ranking.statistic for ranking in meta.rankings} == set(P.Statistic)
    for ranking in meta.rankings:
        rows = {row.metric: row for row in ranking.rows}
        assert set(rows) == {1, 2, 3}, ranking.statistic
        assert rows[1].rank == rows[2].rank, ranking.statistic
        assert 2 not in rows[1].beaten_by and 1 not in rows[2].beaten_by, ranking.statistic


def test_a_single_metric_says_nothing_was_compared():
    meta = meta_evaluation(campaign(n=60, metrics=1), MetaOptions(resamples=50))
    for ranking in meta.rankings:
        assert ranking.comparisons == 0 and ranking.smallest_p is None
        sentence = ranking.test[0].upper() + ranking.test[1:]
        assert ranking.floor_note == f"{sentence} test: no two metrics could be compared on these pairs."


def test_each_test_is_the_same_alone_or_beside_longer_monte_carlo_runs():
    # The Spearman permutation runs longer than the others on the same swap matrices: each
    # comparison's null must not depend on which other statistics were computed with it.
    rng = np.random.default_rng(9)
    n = 300
    human = rng.integers(1, 5, n).astype(float)
    scores = np.vstack([human + rng.normal(0, s, n) for s in (0.8, 1.2, 2.0)])
    empty = np.full(scores.shape, np.nan)
    data = P.PairedInput([1, 2, 3], scores, (human >= 3).astype(np.int8), human, empty, empty)
    together = {(t.statistic, t.metric_a, t.metric_b): t for t in P.compare(data, P.PairedOptions(resamples=300))}
    for statistic in (P.Statistic.AUC, P.Statistic.PEARSON, P.Statistic.SPEARMAN):
        alone = P.compare(data, P.PairedOptions(resamples=300, statistics=(statistic,)))
        for test in alone:
            other = together[(statistic, test.metric_a, test.metric_b)]
            assert test.p_permutation == other.p_permutation and test.p_value == other.p_value
            assert test.permutation_resamples == other.permutation_resamples
    assert together[(P.Statistic.SPEARMAN, 1, 2)].permutation_resamples == P.resamples_for(3, 0.05) == 599
    assert together[(P.Statistic.AUC, 1, 2)].permutation_resamples == 300
