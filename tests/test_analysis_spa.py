"""Soft Pairwise Accuracy on the right items: paired only on shared sources, two-sample otherwise.

Checked against an independent SPA written here (Thompson et al. 2024: mean over system pairs of
1 - |p_human - p_metric|, each p-value from ``scipy.stats.permutation_test``) on a simulated
4-system campaign with different paraphrase rates.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from scoring.analysis.systems import SHARED_SOURCES, system_view

RATES = (0.81, 0.58, 0.41, 0.26)
RESAMPLES = 4000


def simulated_campaign(seed: int, shared: bool, n: int = 100):
    """4 systems x n pairs, 3 judges each (15% of answers flipped); sources disjoint or shared."""
    rng = np.random.default_rng(seed)
    systems: list[str] = []
    sources: list[str] = []
    graded: list[float] = []
    binary: list[int] = []
    for index, rate in enumerate(RATES):
        paraphrase = rng.random(n) < rate
        judges = np.where(paraphrase[:, None], rng.integers(3, 5, (n, 3)), rng.integers(1, 3, (n, 3)))
        judges = np.where(rng.random((n, 3)) < 0.15, 5 - judges, judges)
        graded.extend(judges.mean(axis=1))
        binary.extend(((judges >= 3).sum(axis=1) >= 2).astype(int))
        systems += ["ABCD"[index]] * n
        sources += [f"s{i}" if shared else f"s{index}-{i}" for i in range(n)]
    human = np.array(graded)
    good = human + rng.normal(0, 0.5, len(human))  # a noisy copy of the human scale
    weak = human + rng.normal(0, 2.0, len(human))  # less signal
    noise = rng.normal(0, 1, len(human))  # no signal
    return systems, sources, np.array(binary, dtype=np.int8), human, np.vstack([good, weak, noise])


def _greater(x, y, axis):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def reference_spa(systems, sources, human, metric, seed: int) -> float:
    """Independent SPA: per system pair, scipy permutation p-values (paired on shared sources
    when every source is shared, else two-sample over all items)."""
    systems = np.asarray(systems)
    sources = np.asarray(sources)
    names = sorted(set(systems.tolist()))
    total = []
    for salt, (first, second) in enumerate(combinations(names, 2)):
        a, b = systems == first, systems == second
        same_sources = set(sources[a]) == set(sources[b])
        p = []
        for values in (human, metric):
            if same_sources:
                order_a, order_b = np.argsort(sources[a]), np.argsort(sources[b])
                data = (values[a][order_a], values[b][order_b])
                kind = "samples"
            else:
                data = (values[a], values[b])
                kind = "independent"
            result = stats.permutation_test(
                data,
                _greater,
                permutation_type=kind,
                alternative="greater",
                n_resamples=RESAMPLES,
                vectorized=True,
                random_state=np.random.default_rng([seed, salt]),
            )
            p.append(result.pvalue)
        total.append(1 - abs(p[0] - p[1]))
    return float(np.mean(total))


@pytest.mark.parametrize("shared", [False, True])
def test_spa_matches_an_independent_implementation(shared):
    systems, sources, binary, human, scores = simulated_campaign(1, shared)
    view = system_view(
        systems, sources, binary, human, [1, 2, 3], scores, scores, resamples=RESAMPLES, seed=5, spa_resamples=0
    )
    assert view.paired_pairs == (6 if shared else 0) and view.paired_by_source is shared
    assert all(pair.items == (100 if shared else 200) for pair in view.pairs)
    for row, metric in enumerate(view.metrics):
        expected = reference_spa(systems, sources, human, scores[row], seed=11)
        # Two Monte-Carlo estimates with 4,000 resamples each: they agree to Monte-Carlo error.
        assert metric.spa == pytest.approx(expected, abs=0.02), row


def test_disjoint_sources_use_all_items_and_rank_the_metrics():
    systems, sources, binary, human, scores = simulated_campaign(0, shared=False)
    view = system_view(systems, sources, binary, human, [1, 2, 3], scores, scores, resamples=2000, seed=5)
    # A beats D on all 200 items: a tiny p, not a paired test on a handful of shared sources.
    a_vs_d = next(pair for pair in view.pairs if (pair.first, pair.second) == ("A", "D"))
    assert not a_vs_d.paired and a_vs_d.items == 200 and a_vs_d.p_human < 0.001
    good, weak, noise = (metric.spa for metric in view.metrics)
    assert good > 0.85 and weak > 0.8 and noise < min(good, weak) - 0.2


def test_a_few_accidentally_shared_sources_do_not_make_a_paired_test():
    systems, sources, binary, human, scores = simulated_campaign(0, shared=False)
    # Systems A and D share 3 of their 100 sources by chance.
    sources = list(sources)
    for i in range(3):
        sources[300 + i] = sources[i]
    view = system_view(systems, sources, binary, human, [1], scores[:1], scores[:1], resamples=500, spa_resamples=0)
    assert view.paired_pairs == 0
    a_vs_d = next(pair for pair in view.pairs if (pair.first, pair.second) == ("A", "D"))
    assert a_vs_d.items == 200 and a_vs_d.p_human < 0.01
    # 95 of 100 sources shared (>= SHARED_SOURCES): paired on those 95.
    assert SHARED_SOURCES == 0.9
    systems2, sources2, binary2, human2, scores2 = simulated_campaign(0, shared=True)
    sources2 = list(sources2)
    for i in range(5):
        sources2[300 + i] = f"other-{i}"
    view2 = system_view(
        systems2, sources2, binary2, human2, [1], scores2[:1], scores2[:1], resamples=500, spa_resamples=0
    )
    a_vs_d = next(pair for pair in view2.pairs if (pair.first, pair.second) == ("A", "D"))
    assert a_vs_d.paired and a_vs_d.items == 95
    assert view2.paired_pairs == 6
    assert [pair.items for pair in view2.pairs] == [100, 100, 95, 100, 95, 95]  # pairs with D: 95 shared


def test_a_judge_with_no_signal_gets_spa_near_one_half():
    systems, sources, binary, human, _ = simulated_campaign(2, shared=False)
    rng = np.random.default_rng(9)
    noise = rng.normal(0, 1, (12, len(human)))
    view = system_view(systems, sources, binary, human, list(range(12)), noise, noise, resamples=1000, spa_resamples=0)
    values = np.array([metric.spa for metric in view.metrics])
    # Human p-values are near 0 for most system pairs, a no-signal judge's are uniform: E[SPA] = 1/2.
    assert abs(values.mean() - 0.5) < 0.08


def test_spa_interval_contains_its_estimate():
    for seed in range(3):
        systems, sources, binary, human, scores = simulated_campaign(seed, shared=seed == 1)
        view = system_view(
            systems, sources, binary, human, [1, 2, 3], scores, scores, resamples=500, seed=3, spa_resamples=60
        )
        for metric in view.metrics:
            low, high = metric.spa_interval
            assert 0 <= low <= metric.spa <= high <= 1
            assert high - low > 0.01  # a real interval, not the point


def test_spa_interval_is_recentred_where_the_plain_percentile_misses_the_estimate():
    from scoring.analysis.systems import _spa_intervals

    systems, sources, binary, human, scores = simulated_campaign(5, shared=False, n=12)
    view = system_view(
        systems, sources, binary, human, [1, 2, 3], scores, scores, resamples=500, seed=3, spa_resamples=60
    )
    draws, _ = _spa_intervals(systems, sources, human, scores, ["A", "B", "C", "D"], 60, 3, 0.95)
    good = view.metrics[0]
    plain_low, plain_high = np.percentile(draws[0], [2.5, 97.5])
    assert not plain_low <= good.spa <= plain_high  # the bootstrap's bias: the plain interval misses it
    low, high = good.spa_interval
    assert low <= good.spa <= high
    # The re-centred interval keeps the bootstrap's spread around the estimate.
    shifted = draws[0] - np.median(draws[0]) + good.spa
    assert low == pytest.approx(max(0.0, np.percentile(shifted, 2.5)))
    assert high == pytest.approx(min(1.0, np.percentile(shifted, 97.5)))
