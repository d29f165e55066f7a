"""Inverse-probability weighted statistics and the adaptive order, checked against implementations
written here and against the full pool on populations whose answer is known."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from scoring.analysis import paired, selection, weighted

SEED = 20250101  # the project's seed (PARAEVAL_SEED's default)


def loop_auc(scores: np.ndarray, positive: np.ndarray, w: np.ndarray) -> float:
    """The weighted Mann-Whitney AUC by its definition: every (paraphrase, non-paraphrase) pair."""
    num = den = 0.0
    for i in np.flatnonzero(positive):
        for j in np.flatnonzero(~positive):
            psi = 1.0 if scores[i] > scores[j] else 0.5 if scores[i] == scores[j] else 0.0
            num += w[i] * w[j] * psi
            den += w[i] * w[j]
    return num / den


def moments_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    sw = w.sum()
    mx, my = (w * x).sum() / sw, (w * y).sum() / sw
    cov = (w * (x - mx) * (y - my)).sum() / sw
    return cov / math.sqrt((w * (x - mx) ** 2).sum() / sw * (w * (y - my) ** 2).sum() / sw)


def sample_case(seed: int, n: int = 120) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    positive = rng.random(n) < 0.4
    a = np.round(rng.normal(size=n) + positive, 1)  # rounded: ties on purpose
    b = np.round(rng.normal(size=n) + 0.4 * positive, 1)
    w = rng.uniform(1, 10, size=n)
    return a, b, positive, w


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_weighted_auc_is_the_weighted_mann_whitney_statistic(seed: int) -> None:
    a, _, positive, w = sample_case(seed)
    assert weighted.hajek_auc(a, positive, w) == pytest.approx(loop_auc(a, positive, w), abs=1e-12)


def test_integer_weights_equal_repeated_pairs() -> None:
    a, b, positive, _ = sample_case(4)
    counts = np.random.default_rng(5).integers(1, 5, size=len(a))
    ra, rb, rp = np.repeat(a, counts), np.repeat(b, counts), np.repeat(positive, counts)
    w = counts.astype(float)
    assert weighted.hajek_auc(a, positive, w) == pytest.approx(paired.auc_from_ranks(stats.rankdata(ra), rp))
    assert weighted.weighted_pearson(a, b, w) == pytest.approx(stats.pearsonr(ra, rb)[0])
    assert weighted.weighted_spearman(a, b, w) == pytest.approx(stats.spearmanr(ra, rb)[0])


def test_weighted_correlations_match_the_moment_formulas() -> None:
    a, b, _, w = sample_case(6)
    assert weighted.weighted_pearson(a, b, w) == pytest.approx(moments_pearson(a, b, w), abs=1e-12)
    ranks_a = np.array([(w[a < v].sum() + 0.5 * w[a == v].sum()) / w.sum() for v in a])
    ranks_b = np.array([(w[b < v].sum() + 0.5 * w[b == v].sum()) / w.sum() for v in b])
    assert weighted.weighted_spearman(a, b, w) == pytest.approx(moments_pearson(ranks_a, ranks_b, w), abs=1e-12)
    assert weighted.weighted_pearson(a, np.ones_like(a), w) is None


def test_equal_weights_give_delongs_test_exactly() -> None:
    a, b, positive, _ = sample_case(7, n=200)
    ones = np.ones(len(a))
    ca, cb = weighted.weighted_components(a, positive, ones), weighted.weighted_components(b, positive, ones)
    assert ca is not None and cb is not None
    result = weighted.weighted_delong(ca, cb)
    expected = paired.delong_test(paired.delong_components(a, positive), paired.delong_components(b, positive))
    assert (result.difference, result.standard_error, result.p_value) == pytest.approx(expected, rel=1e-9)


def test_the_weighted_standard_error_matches_a_direct_linearisation() -> None:
    a, _, positive, w = sample_case(8)
    parts = weighted.weighted_components(a, positive, w)
    assert parts is not None
    auc = loop_auc(a, positive, w)
    pos, neg = np.flatnonzero(positive), np.flatnonzero(~positive)

    def psi(i: int, j: int) -> float:
        return 1.0 if a[i] > a[j] else 0.5 if a[i] == a[j] else 0.0

    v10 = np.array([sum(w[j] * psi(i, j) for j in neg) / w[neg].sum() for i in pos])
    v01 = np.array([sum(w[i] * psi(i, j) for i in pos) / w[pos].sum() for j in neg])
    var = 0.0
    for v, ww in ((v10, w[pos]), (v01, w[neg])):
        p = ww / ww.sum()
        var += len(v) / (len(v) - 1) * float(np.sum(p**2 * (v - auc) ** 2))
    assert weighted.auc_standard_error(parts) == pytest.approx(math.sqrt(var), rel=1e-9)


def test_bad_weights_are_refused_with_a_message() -> None:
    with pytest.raises(ValueError, match="weights must be positive"):
        weighted.hajek_auc(np.array([1.0, 2.0]), np.array([True, False]), np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="3 weights for 2 values"):
        weighted.hajek_auc(np.array([1.0, 2.0]), np.array([True, False]), np.ones(3))
    assert weighted.hajek_auc(np.array([1.0, 2.0]), np.array([True, True]), np.ones(2)) is None


# --- the adaptive order ----------------------------------------------------------------------


def test_draw_weights_follow_the_disagreement_with_a_floor() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0, np.nan])
    b = np.array([1.0, 2.0, 4.0, 3.0, 2.0])
    spread = selection.disagreement(np.vstack([a, b]))
    # Ranks of a: 0, 1/3, 2/3, 1 ; of b: 0, 1/4 (tied mid-rank 1.5 of 4 -> 0.5/... ) computed by hand:
    ranks_b = (stats.rankdata(b) - 1) / 4
    expected = np.abs(np.array([0, 1 / 3, 2 / 3, 1]) - ranks_b[:4])
    assert spread[:4] == pytest.approx(expected)
    assert math.isnan(spread[4])
    q = selection.draw_weights(spread, floor=0.1)
    assert q[:4] == pytest.approx(0.1 + 0.9 * expected / expected.max())
    assert q[4] == 1.0
    assert q.min() >= 0.1
    with pytest.raises(ValueError, match="at least two metrics"):
        selection.disagreement(np.vstack([a]))
    with pytest.raises(ValueError, match="floor"):
        selection.draw_weights(spread, floor=0)


def test_inclusion_probabilities_are_the_poisson_ones_at_the_largest_key_served() -> None:
    q = np.array([0.1, 0.5, 1.0, 0.2])
    u = np.array([0.05, 0.3, 0.9, 0.5])
    keys = selection.order_keys(q, u)
    served = keys <= 0.9
    assert served.tolist() == [True, True, True, False]
    assert selection.inclusion_probabilities(q, keys, served) == pytest.approx(np.minimum(1, 0.9 * q))
    assert selection.inclusion_probabilities(q, keys, np.zeros(4, dtype=bool)).tolist() == [1, 1, 1, 1]
    draws = [selection.uniform_draw(SEED, "campaign", pair) for pair in range(2000)]
    assert min(draws) > 0 and max(draws) < 1
    assert stats.kstest(draws, "uniform").pvalue > 0.01
    assert selection.uniform_draw(SEED, "campaign", 7) == selection.uniform_draw(SEED, "campaign", 7)


def loop_influence(scores: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The norm of the expected standardised ΔAUC influences, by the definition, pair by pair:
    each pair counts as a paraphrase with weight p and as a non-paraphrase with weight 1 - p."""
    n = scores.shape[1]
    P, Q = p.sum(), (1 - p).sum()

    def psi(x: float, y: float) -> float:
        return 1.0 if x > y else 0.5 if x == y else 0.0

    placements = []
    for row in scores:
        v10 = np.array([sum((1 - p[j]) * psi(row[i], row[j]) for j in range(n)) / Q for i in range(n)])
        v01 = np.array([sum(p[i] * psi(row[i], row[j]) for i in range(n)) / P for j in range(n)])
        auc = float(np.sum(p * v10) / P)
        placements.append((v10 - auc, v01 - auc))
    total = np.zeros(n)
    for a in range(len(scores)):
        for b in range(a + 1, len(scores)):
            u_pos = (placements[a][0] - placements[b][0]) / P
            u_neg = (placements[a][1] - placements[b][1]) / Q
            expected = p * u_pos**2 + (1 - p) * u_neg**2
            total += expected / expected.sum()
    return np.sqrt(total)


def test_the_expected_influence_matches_its_definition_written_here() -> None:
    rng = np.random.default_rng(SEED)
    n = 30
    truth = rng.random(n) < 0.4
    scores = np.round(np.vstack([rng.normal(size=n) + k * truth for k in (1.0, 0.5, 0.2)]), 1)  # ties on purpose
    p = rng.uniform(0.05, 0.95, size=n)
    assert selection.expected_influence(scores, p) == pytest.approx(loop_influence(scores, p), rel=1e-9)
    # Without labels: the probability is the mean rank-normalised score, kept off 0 and 1.
    ranks = np.vstack([(stats.rankdata(row) - 1) / (n - 1) for row in scores])
    guess = np.clip(ranks.mean(axis=0), 0.02, 0.98)
    assert selection.paraphrase_probability(scores) == pytest.approx(guess)
    assert selection.expected_influence(scores) == pytest.approx(loop_influence(scores, guess), rel=1e-9)
    # A pair some metric did not score: NaN for it, the others computed without it.
    holed = scores.copy()
    holed[1, 4] = np.nan
    got = selection.expected_influence(holed, p)
    assert math.isnan(got[4])
    kept = np.arange(n) != 4
    assert got[kept] == pytest.approx(loop_influence(scores[:, kept], p[kept]), rel=1e-9)
    with pytest.raises(ValueError, match="at least two metrics"):
        selection.expected_influence(scores[:1])


def test_the_expected_influence_on_known_cases() -> None:
    rng = np.random.default_rng(SEED)
    a = rng.normal(size=40)
    # Two metrics that rank every pair alike: no label can move their ΔAUC, every pair alike.
    alike = selection.expected_influence(np.vstack([a, np.exp(a)]))
    assert alike == pytest.approx(np.zeros(40), abs=1e-12)
    assert selection.draw_weights(alike).tolist() == [1.0] * 40
    # Labels known (p at 0 or 1): one ΔAUC's influences, standardised, are DeLong's components
    # (paired.delong_components, written apart) minus the ΔAUC, over the size of the class.
    positive = rng.random(40) < 0.3
    b = rng.normal(size=40) + positive
    c = rng.normal(size=40) + 0.3 * positive
    known = np.where(positive, 1 - 1e-12, 1e-12)
    got = selection.expected_influence(np.vstack([b, c]), known)
    cb, cc = paired.delong_components(b, positive), paired.delong_components(c, positive)
    delta = float(np.mean(cb[0]) - np.mean(cc[0]))
    u = np.empty(40)
    u[positive] = (cb[0] - cc[0] - delta) / positive.sum()
    u[~positive] = (cb[1] - cc[1] - delta) / (~positive).sum()
    assert got == pytest.approx(np.abs(u) / math.sqrt(np.sum(u**2)), rel=1e-6)
    # With their signs, as the model-assisted bound of the benchmark reads them.
    influences = selection.standardised_influences(np.vstack([b, c]), known)
    realised = np.where(positive, influences.positive[0], influences.negative[0])
    assert realised == pytest.approx(u / math.sqrt(np.sum(u**2)), rel=1e-6, abs=1e-12)


def test_the_weighted_figures_of_the_whole_pool_are_the_census_values() -> None:
    """Every pair drawn: every probability is 1, whatever the keys, and each Hájek figure is the
    pool's own (scipy's and the loop's), however unequal the draw weights."""
    rng = np.random.default_rng(SEED)
    n = 80
    positive = rng.random(n) < 0.4
    a = np.round(rng.normal(size=n) + positive, 1)
    b = rng.normal(size=n) + 0.5 * positive
    human = a + rng.normal(size=n)
    q = selection.draw_weights(selection.expected_influence(np.vstack([a, b])))
    assert q.min() < 0.3 and q.max() == 1.0
    keys = selection.order_keys(q, rng.random(n))
    pi = selection.inclusion_probabilities(q, keys, np.ones(n, dtype=bool))
    assert pi.tolist() == [1.0] * n
    w = 1 / pi
    assert weighted.hajek_auc(a, positive, w) == pytest.approx(loop_auc(a, positive, np.ones(n)))
    assert weighted.weighted_pearson(a, human, w) == pytest.approx(stats.pearsonr(a, human)[0])
    assert weighted.weighted_spearman(b, human, w) == pytest.approx(stats.spearmanr(b, human)[0])
    assert weighted.ht_total(positive.astype(float), pi) == positive.sum()


# --- unbiasedness on a known population ------------------------------------------------------


def population(seed: int, n: int = 600, draw: str = "spread") -> dict[str, np.ndarray]:
    """Two metrics that disagree most where they are least right: the disputed pairs are harder.
    ``draw``: the planner's weights (``influence``) or the spread of the ranks used before."""
    rng = np.random.default_rng(seed)
    positive = rng.random(n) < 0.45
    shared = rng.normal(size=n) + 1.2 * positive
    a = shared + rng.normal(scale=0.6, size=n)
    b = shared + rng.normal(scale=1.2, size=n) + 0.3 * positive
    human = shared + rng.normal(scale=0.5, size=n)
    if draw == "influence":
        q = selection.draw_weights(selection.expected_influence(np.vstack([a, b])))
    else:
        q = selection.draw_weights(selection.disagreement(np.vstack([a, b])), floor=0.1)
    return {"positive": positive, "a": a, "b": b, "human": human, "q": q}


@pytest.mark.parametrize("draw", ["influence", "spread"])
def test_weighted_estimates_are_unbiased_for_the_whole_pool_and_unweighted_ones_are_not(draw: str) -> None:
    pop = population(SEED, draw=draw)
    q, positive, a, b, human = pop["q"], pop["positive"], pop["a"], pop["b"], pop["human"]
    full = {
        "auc": loop_auc(a, positive, np.ones(len(a))),
        "pearson": stats.pearsonr(a, human)[0],
        "spearman": stats.spearmanr(b, human)[0],
        "positives": float(positive.sum()),
        "human total": float(human.sum()),
    }
    # Another stream than the population's (the same seed would draw the same uniforms again).
    rng = np.random.default_rng([SEED, 1])
    draws = 1500
    got: dict[str, list[float]] = {key: [] for key in full}
    naive: list[float] = []
    simple: list[float] = []  # Spearman on a simple random sample of the same size
    for _ in range(draws):
        fair = rng.choice(len(q), size=120, replace=False)
        simple.append(stats.spearmanr(b[fair], human[fair])[0])
        keys = selection.order_keys(q, rng.random(len(q)))
        served = np.zeros(len(q), dtype=bool)
        served[np.argsort(keys)[:120]] = True  # the first 120 pairs of the order: the real design
        pi = selection.inclusion_probabilities(q, keys, served)[served]
        w = 1 / pi
        got["auc"].append(weighted.hajek_auc(a[served], positive[served], w))
        got["pearson"].append(weighted.weighted_pearson(a[served], human[served], w))
        got["spearman"].append(weighted.weighted_spearman(b[served], human[served], w))
        got["positives"].append(weighted.ht_total(positive[served].astype(float), pi))
        got["human total"].append(float(np.sum(human[served] / pi)))  # Horvitz-Thompson, written here
        naive.append(paired.auc_from_ranks(stats.rankdata(a[served]), positive[served]))
    for key, values in got.items():
        mean, se = np.mean(values), np.std(values, ddof=1) / math.sqrt(draws)
        if key == "spearman":
            # Spearman's coefficient of any sample of 120 is biased by O(1/n) (about -0.006 here,
            # with or without weights): the weighted one must match a simple random sample's.
            target, se = np.mean(simple), math.hypot(se, np.std(simple, ddof=1) / math.sqrt(draws))
        else:
            target = full[key]
        assert abs(mean - target) < 3 * se, (key, mean, target, se)
    # The unweighted AUC describes the disputed pairs: far off (the weights are needed).
    naive_se = np.std(naive, ddof=1) / math.sqrt(draws)
    assert full["auc"] - np.mean(naive) > 10 * naive_se


def test_the_weighted_delong_test_keeps_its_false_positive_rate_under_adaptive_selection() -> None:
    """Two metrics equally good (exchangeable), a fresh pool per run, adaptive sample of 150."""
    rng = np.random.default_rng(SEED + 1)
    runs, rejections = 600, 0
    for _ in range(runs):
        n = 400
        positive = rng.random(n) < 0.45
        shared = rng.normal(size=n) + positive
        a = shared + rng.normal(size=n)
        b = shared + rng.normal(size=n)
        q = selection.draw_weights(selection.disagreement(np.vstack([a, b])))
        keys = selection.order_keys(q, rng.random(n))
        served = np.zeros(n, dtype=bool)
        served[np.argsort(keys)[:150]] = True
        w = 1 / selection.inclusion_probabilities(q, keys, served)[served]
        ca = weighted.weighted_components(a[served], positive[served], w)
        cb = weighted.weighted_components(b[served], positive[served], w)
        assert ca is not None and cb is not None
        rejections += weighted.weighted_delong(ca, cb).p_value < 0.05
    rate = rejections / runs
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs), rate


def test_the_weighted_section_tests_every_two_metrics_holm_adjusted() -> None:
    """Equal probabilities: every difference is DeLong's test; Holm's adjustment written here."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Metric:
        id: int
        label: str
        higher_is_closer: bool

    a, b, positive, _ = sample_case(9, n=150)
    c = -np.round(np.random.default_rng(10).normal(size=150) + 0.7 * positive, 1)  # lower is closer
    metrics = [Metric(1, "A", True), Metric(2, "B", True), Metric(3, "C", False)]
    binary = positive.astype(np.int8)
    section = weighted.weighted_section(
        metrics, np.vstack([a, b, c]), binary, np.full(150, np.nan), np.ones(150), np.ones(150, dtype=bool)
    )
    oriented = [a, b, -c]
    expected = {}
    for i, j in ((0, 1), (0, 2), (1, 2)):
        expected[(i + 1, j + 1)] = paired.delong_test(
            paired.delong_components(oriented[i], positive), paired.delong_components(oriented[j], positive)
        )
    raw = sorted((test[2], key) for key, test in expected.items())
    holm_by_hand, running = {}, 0.0
    for rank, (p, key) in enumerate(raw):
        running = max(running, min(1.0, (3 - rank) * p))
        holm_by_hand[key] = running
    assert [(d.metric_a, d.metric_b) for d in section.differences] == [(1, 2), (1, 3), (2, 3)]
    for d in section.differences:
        difference, se, p = expected[(d.metric_a, d.metric_b)]
        assert (d.difference, d.standard_error, d.p_value) == pytest.approx((difference, se, p), rel=1e-9)
        assert d.p_holm == pytest.approx(holm_by_hand[(d.metric_a, d.metric_b)], rel=1e-9)
        assert d.pairs == 150
    assert section.metrics[2].auc == pytest.approx(paired.auc_from_ranks(stats.rankdata(-c), positive))
    assert section.metrics[0].pearson is None  # no graded answers
