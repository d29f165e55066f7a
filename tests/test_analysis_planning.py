"""The campaign planner: interval width and power per (pairs x judges), checked two ways.

1. Against implementations written here, on cases whose answer is known: the AUCs of noise-free
   labels are scikit-learn's, DeLong's variance is the O(N^2) kernel form, the power the normal
   formula with the finite-population correction; label noise attenuates the difference by
   exactly (1 - a - b); the majority of three judges is wrong with 3 e^2 (1 - e) + e^3; the
   Pearson r of the vote share and the variance of the difference of two r's by enumerating
   every vote outcome of a small pool.
2. Against repeated simulated campaigns (the dashboard's own DeLong, Williams and Holm): the
   predicted power within 0.05 of the observed one (seeded; ``benchmarks/planning.py`` runs more).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from scoring.analysis import paired
from scoring.analysis import planning as P
from scoring.analysis.bootstrap import DEFAULT_SEED

Z = stats.norm.isf(0.025)


def pool(
    n: int = 3000, seed: int = DEFAULT_SEED, strength: tuple[float, ...] = (1.2, 0.8)
) -> tuple[np.ndarray, np.ndarray]:
    """Gold truth (40 % paraphrases) and metrics whose scores separate it with ``strength``."""
    rng = np.random.default_rng(seed)
    truth = (rng.random(n) < 0.4).astype(np.float64)
    scores = np.array([s * truth + rng.normal(0, 1, n) for s in strength])
    return scores, truth


def hand_delong(a: np.ndarray, b: np.ndarray, positive: np.ndarray) -> tuple[float, float, float]:
    """AUC difference and DeLong's two variance parts (population, ddof 0) by the kernel."""

    def components(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x, y = s[positive], s[~positive]
        kernel = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
        return kernel.mean(axis=1), kernel.mean(axis=0)

    (a10, a01), (b10, b01) = components(a), components(b)
    return float(a10.mean() - b10.mean()), float((a10 - b10).var()), float((a01 - b01).var())


def test_noise_free_difference_width_and_power_are_delongs_normal_approximation():
    scores, truth = pool(1500)
    data = P.PlanInput(["a", "b"], scores, truth, P.NoiseModel(1.0))
    plan = P.plan(data, P.Question.AUC, [200, 600], [1])
    positive = truth == 1
    p = positive.mean()
    expected = roc_auc_score(truth, scores[0]) - roc_auc_score(truth, scores[1])
    difference, s10, s01 = hand_delong(scores[0], scores[1], positive)
    assert difference == pytest.approx(expected, abs=1e-12)
    assert plan.true_difference == pytest.approx(expected, abs=1e-12)
    for n in (200, 600):
        cell = plan.cell(n, 1)
        se = math.sqrt(s10 / (n * p) + s01 / (n * (1 - p)))
        # The campaign draws n of the pool's N pairs: with labels fixed by the pairs, the estimate's
        # spread is DeLong's times the finite-population correction sqrt(1 - n / N); the test
        # still divides by DeLong's standard error.
        spread = se * math.sqrt(1 - n / len(truth))
        power = stats.norm.sf((Z * se - expected) / spread) + stats.norm.cdf((-Z * se - expected) / spread)
        assert cell.difference == pytest.approx(expected, abs=1e-12)
        assert cell.width == pytest.approx(2 * Z * se, rel=1e-9)
        assert cell.power == pytest.approx(power, rel=1e-9)
        assert cell.labelled == n and cell.judgements == n


def test_label_noise_attenuates_the_difference_by_one_minus_the_wrong_shares():
    scores, truth = pool(1200)
    e = 0.15
    data = P.PlanInput(["a", "b"], scores, truth, P.NoiseModel.from_flip(e))
    cell = P.plan(data, P.Question.AUC, [100], [1]).cell(100, 1)
    p = truth.mean()
    said_yes = p * (1 - e) + (1 - p) * e
    a = (1 - p) * e / said_yes  # wrong among the observed positives
    b = p * e / (1 - said_yes)  # wrong among the observed negatives
    true = roc_auc_score(truth, scores[0]) - roc_auc_score(truth, scores[1])
    assert cell.difference == pytest.approx(true * (1 - a - b), rel=1e-9)


def test_majority_of_judges_is_wrong_and_tied_as_the_binomial_says():
    e = 0.2
    assert P.majority_outcome(1 - e, 1) == pytest.approx((e, 0.0))
    assert P.majority_outcome(1 - e, 3) == pytest.approx((3 * e**2 * (1 - e) + e**3, 0.0))
    assert P.majority_outcome(1 - e, 2) == pytest.approx((e**2, 2 * e * (1 - e)))
    # Ties drop pairs: two judges label fewer pairs than one.
    scores, truth = pool(500)
    plan = P.plan(P.PlanInput(["a", "b"], scores, truth, P.NoiseModel(0.8)), P.Question.AUC, [100], [1, 2])
    assert plan.cell(100, 2).labelled == pytest.approx(100 * (1 - 0.32))


def test_pearson_moments_match_an_enumeration_of_every_vote_outcome():
    rng = np.random.default_rng(DEFAULT_SEED)
    n, k, q = 6, 2, 0.75
    truth = np.array([0.0, 1.0, 0.3, 0.9, 1.0, 0.0])
    a, b = rng.normal(size=n), rng.normal(size=n)
    got = P.correlation_moments(a, b, truth, q, k)
    # The population: pair i (1/n) x its true class x each judge's vote.
    rows, weights, owner = [], [], []
    for i in range(n):
        for true in (0, 1):
            p_true = truth[i] if true else 1 - truth[i]
            for votes in itertools.product((0, 1), repeat=k):
                right = [(v == true) for v in votes]
                w = p_true * np.prod([q if r else 1 - q for r in right]) / n
                rows.append((a[i], b[i], sum(votes) / k))
                weights.append(w)
                owner.append(i)
    x = np.array(rows)
    w = np.array(weights)
    mean = w @ x
    cov = (x - mean).T * w @ (x - mean)
    sd = np.sqrt(np.diag(cov))
    r_a, r_b = cov[0, 2] / (sd[0] * sd[2]), cov[1, 2] / (sd[1] * sd[2])
    assert got.r_a == pytest.approx(r_a, rel=1e-9)
    assert got.r_b == pytest.approx(r_b, rel=1e-9)
    assert got.r_ab == pytest.approx(cov[0, 1] / (sd[0] * sd[1]), rel=1e-9)
    # Influence function of r_a - r_b, written from the standardised variables directly.
    za, zb, zy = ((x - mean) / sd).T
    influence = (za * zy - r_a / 2 * (za**2 + zy**2)) - (zb * zy - r_b / 2 * (zb**2 + zy**2))
    assert got.variance == pytest.approx(w @ influence**2 - (w @ influence) ** 2, rel=1e-9)
    # The part due to which pairs are drawn: the variance over pairs of each pair's expected influence.
    per_pair = np.bincount(owner, weights=w * influence) * n
    assert got.between == pytest.approx(per_pair.var(), rel=1e-9)


def test_williams_standard_error_is_the_one_behind_the_dashboards_williams_test():
    r_a, r_b, r_ab, n = 0.55, 0.42, 0.6, 250
    t, _ = paired.williams_test(r_a, r_b, r_ab, n)
    assert t == pytest.approx((r_a - r_b) / P.williams_se(r_a, r_b, r_ab, n), rel=1e-12)


def test_holm_over_many_draws_at_once_is_holm_row_by_row():
    p = np.random.default_rng(DEFAULT_SEED).random((50, 6)) ** 3
    together = P.holm_matrix(p)
    for row, adjusted in zip(p, together, strict=True):
        assert adjusted == pytest.approx(paired.holm(list(row)))


def test_judge_accuracy_from_the_agreement_of_two_judges():
    # 100 pairs with two votes; 68 agree: a = 0.68 = q^2 + (1-q)^2 gives q = 0.8.
    index = np.repeat(np.arange(100), 2)
    votes = np.array([1, 1] * 40 + [0, 0] * 28 + [1, 0] * 32)
    assert P.judge_accuracy_from_pilot(index, votes) == pytest.approx(0.8)
    assert P.judge_accuracy_from_pilot(np.arange(5), np.ones(5, dtype=np.int64)) is None


def test_cost_is_participants_times_reward_with_the_fee():
    scores, truth = pool(500)
    data = P.PlanInput(["a", "b"], scores, truth, P.NoiseModel(0.9))
    plan = P.plan(data, P.Question.AUC, [100, 110], [3], pairs_per_participant=50, reward=2.0, fee=0.33)
    assert plan.cell(100, 3).participants == 6
    assert plan.cell(100, 3).cost == pytest.approx(6 * 2.0 * 1.33)
    assert plan.cell(110, 3).participants == 7  # 330 judgements: 6.6 participants, rounded up
    assert P.plan(data, P.Question.AUC, [100], [3]).cell(100, 3).cost is None


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"pairs": [5]}, "pairs: each number must be at least 10, got 5"),
        ({"pairs": [10_000]}, "pairs: 10000 is more than the 500 scored pairs of the pool"),
        ({"judges": [0]}, "judges per pair: each number must be between 1 and 25, got 0"),
        ({"alpha": 0.7}, "alpha must be between 0 and 0.5, got 0.7"),
    ],
)
def test_bad_grids_are_refused_with_what_is_wrong(change, words):
    scores, truth = pool(500)
    data = P.PlanInput(["a", "b"], scores, truth, P.NoiseModel(0.9))
    arguments = {"pairs": [100], "judges": [1], **change}
    with pytest.raises(P.PlanError, match=words):
        P.plan(data, P.Question.AUC, arguments.pop("pairs"), arguments.pop("judges"), **arguments)
    with pytest.raises(P.PlanError, match="flip probability"):
        P.NoiseModel.from_flip(0.5)


# --- the check by simulation ---------------------------------------------------------------------

CAMPAIGNS = 400


@pytest.mark.parametrize(
    ("question", "strength", "pairs", "judges", "flip"),
    [
        (P.Question.AUC, (1.2, 0.8), 150, 1, 0.1),
        (P.Question.AUC, (1.2, 0.8), 300, 3, 0.2),
        (P.Question.AUC, (1.0, 1.0), 200, 3, 0.1),  # equal metrics: the power is the false-positive rate
        (P.Question.CORRELATION, (1.2, 0.8), 150, 3, 0.15),
        (P.Question.CLUSTERS, (1.3, 1.0, 0.6), 150, 3, 0.1),
    ],
)
def test_predicted_power_is_within_five_points_of_simulated_campaigns(question, strength, pairs, judges, flip):
    scores, truth = pool(4000, strength=strength)
    names = [f"m{i}" for i in range(len(strength))]
    data = P.PlanInput(names, scores, truth, P.NoiseModel.from_flip(flip))
    cell = P.plan(data, question, [pairs], [judges]).cell(pairs, judges)
    seen = P.simulate(data, question, pairs, judges, campaigns=CAMPAIGNS, seed=DEFAULT_SEED)
    assert abs(cell.power - seen.power) <= 0.05, (cell.power, seen.power)
    # The interval width predicted is the mean width of the campaigns' intervals.
    assert cell.width == pytest.approx(seen.width, rel=0.1)


def test_pilot_truth_takes_the_labels_noise_out():
    # Pairs are paraphrases with a known logistic probability in the metric's probit rank; the
    # pilot's labels are wrong with probability e: the fit, de-noised, recovers the probabilities.
    rng = np.random.default_rng(DEFAULT_SEED)
    n, e = 20000, 0.15
    score = rng.normal(size=n)
    z = P.probit_ranks(score[None, :])[0]
    truth = 1 / (1 + np.exp(-(0.3 + 1.5 * z)))
    true = rng.random(n) < truth
    labels = np.where(rng.random(n) < e, ~true, true).astype(np.int64)
    pilot = np.arange(4000)
    fitted = P.truth_from_pilot(score[None, :], pilot, labels[pilot], e)
    assert np.mean(np.abs(fitted - truth)) < 0.03
    with pytest.raises(P.PlanError, match="the pilot has 3 paraphrases and 2 non-paraphrases"):
        P.truth_from_pilot(score[None, :], np.arange(5), np.array([1, 1, 1, 0, 0]), e)


def test_consensus_truth_finds_two_well_separated_classes():
    scores, truth = pool(2000, strength=(4.0, 4.0, 4.0))
    fitted = P.truth_from_consensus(scores)
    assert np.mean((fitted > 0.5) == (truth == 1)) > 0.95


def test_the_plan_gives_each_stopping_rules_own_power_and_its_size_for_power_0_8():
    """Beside the fixed design's power: the confidence sequence's and the group-sequential plan's,
    the same figures as :mod:`scoring.analysis.sequential_design` on the planner's drift; the
    sizes are the smallest that reach 0.8 (one pair fewer falls short). The clusters get none."""
    from scoring.analysis import sequential_design

    rng = np.random.default_rng(DEFAULT_SEED)
    n = 2000
    truth = (rng.random(n) < 0.6).astype(float)
    a = truth + rng.normal(0, 1, n)
    b = a + rng.normal(0, 0.6, n)
    data = P.PlanInput(["a", "b"], np.array([a, b]), truth, P.NoiseModel.from_flip(0.15))
    plan = P.plan(data, P.Question.AUC, [300], [3])
    cell = plan.cell(300, 3)
    model = P.rule_model(data, P.Question.AUC, 3, 0.05, 5)
    assert model is not None
    theta, ratio = model.walk(300)
    curve = sequential_design.sequence_crossing_curve(theta, 300, 0.05, 300, ratio, model.start)
    assert cell.power_sequence == pytest.approx(curve[-1])
    assert cell.power_sequence < cell.power  # wider than the fixed design's interval
    size = plan.sizes[0]
    assert size.fixed is not None and size.sequence is not None and size.group_sequential is not None
    assert model.fixed_power(size.fixed) >= 0.8 > model.fixed_power(size.fixed - 1)
    assert model.sequence_power(size.sequence) >= 0.8 > model.sequence_power(size.sequence - 1)
    assert 1.3 * size.fixed < size.sequence < 2.0 * size.fixed
    assert size.group_sequential_power >= 0.8
    assert size.fixed < size.group_sequential < 1.06 * size.fixed
    clusters = P.plan(data, P.Question.CLUSTERS, [300], [3])
    assert clusters.sizes == [] and clusters.cell(300, 3).power_sequence is None


def test_sizes_beyond_the_pool_are_none_and_worded_so():
    rng = np.random.default_rng(DEFAULT_SEED)
    n = 80
    truth = (rng.random(n) < 0.5).astype(float)
    a = truth + rng.normal(0, 1, n)
    b = a + rng.normal(0, 0.3, n)  # a small difference: 80 pairs cannot reach power 0.8
    data = P.PlanInput(["a", "b"], np.array([a, b]), truth, P.NoiseModel.from_flip(0.15))
    plan = P.plan(data, P.Question.AUC, [40], [3])
    assert plan.cell(40, 3).power < 0.8
    assert plan.sizes == [P.RuleSizes(3, None, None, None, None, None)]
