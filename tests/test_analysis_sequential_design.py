"""The stopping rules' power and the group-sequential plan, against independent implementations.

The O'Brien-Fleming boundaries against published values; the spending, the crossing
probabilities and the confidence sequence's power against Monte-Carlo walks written here
(seeded, the house seed); the rule as the dashboard applies it (``group_sequential_mask``) on
simulated paths: its false-positive rate and its power.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from scoring.analysis import sequential, sequential_design
from scoring.analysis.bootstrap import DEFAULT_SEED


def test_obrien_fleming_spending_boundaries_match_the_published_table():
    # Lan-DeMets O'Brien-Fleming-type spending, K = 5 equally spaced looks, two-sided alpha 0.05
    # (alpha / 2 per side): Jennison & Turnbull (2000) and gsDesign's sfLDOF give these.
    published = [4.877, 3.357, 2.680, 2.290, 2.031]
    computed = sequential_design.spending_boundaries(np.arange(1, 6) / 5, 0.05)
    assert computed == pytest.approx(published, abs=6e-4)
    # One look: the fixed design's 1.96.
    assert sequential_design.spending_boundaries(np.array([1.0]), 0.05)[0] == pytest.approx(1.959964, abs=1e-5)


def _walks(rng: np.random.Generator, draws: int, times: np.ndarray, drift: float) -> np.ndarray:
    """Z statistics of a Brownian motion with ``drift`` per unit time, at ``times`` (draws x looks)."""
    increments = rng.normal(0, 1, (draws, len(times))) * np.sqrt(np.diff(np.concatenate([[0.0], times])))
    sums = np.cumsum(increments, axis=1) + drift * times
    return sums / np.sqrt(times)


def _first_crossing(z: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    crossed = np.abs(z) >= bounds
    return np.where(crossed.any(axis=1), crossed.argmax(axis=1), -1)


@pytest.mark.parametrize("fractions", [np.arange(1, 5) / 4, np.array([0.3, 0.55, 0.8, 1.0])])
def test_each_look_spends_what_the_spending_function_says(fractions):
    alpha = 0.05
    bounds = sequential_design.spending_boundaries(fractions, alpha)
    rng = np.random.default_rng(DEFAULT_SEED)
    draws = 400_000
    first = _first_crossing(_walks(rng, draws, fractions, 0.0), bounds)
    # The spending function written here: alpha / 2 per side, 2 - 2 Phi(z_{alpha/4} / sqrt(t)).
    cumulative = 2 * (2 - 2 * stats.norm.cdf(stats.norm.isf(alpha / 4) / np.sqrt(fractions)))
    expected = np.diff(np.concatenate([[0.0], cumulative]))
    observed = np.array([(first == k).mean() for k in range(len(fractions))])
    tolerance = 4 * np.sqrt(expected * (1 - expected) / draws) + 2e-5
    assert np.all(np.abs(observed - expected) <= tolerance), (observed, expected)
    assert (first >= 0).mean() == pytest.approx(alpha, abs=4 * math.sqrt(alpha * (1 - alpha) / draws))


def test_the_power_and_the_inflation_agree_with_a_monte_carlo():
    alpha, looks = 0.05, 5
    r = sequential_design.inflation(looks, alpha)
    assert 1.01 < r < 1.05  # O'Brien-Fleming costs little: about 2.5 % more pairs at K = 5
    fractions = np.arange(1, looks + 1) / looks
    bounds = sequential_design.spending_boundaries(fractions, alpha)
    # The drift over the whole plan that gives a fixed design of 1 / R of its size power 0.8.
    drift = (stats.norm.isf(alpha / 2) + stats.norm.isf(0.2)) * math.sqrt(r)
    rng = np.random.default_rng(DEFAULT_SEED)
    draws = 200_000
    observed = (_first_crossing(_walks(rng, draws, fractions, drift), bounds) >= 0).mean()
    assert observed == pytest.approx(0.8, abs=4 * math.sqrt(0.16 / draws))
    # The plan on a labelled-pair scale: the same power through group_sequential_power.
    plan = sequential_design.group_sequential_plan(400, looks, alpha)
    assert plan.max_pairs == math.ceil(400 * r)
    assert plan.looks == tuple(round(k * plan.max_pairs / looks) for k in range(1, looks + 1))
    theta = drift / math.sqrt(400 * r)
    assert sequential_design.group_sequential_power(plan, theta) == pytest.approx(0.8, abs=0.003)


def _sequence_monte_carlo(theta: float, until: int, alpha: float, planned: int, ratio: float, start: int) -> np.ndarray:
    """P(crossed by n) of a Gaussian random walk (drift theta, unit variance per step) against the
    confidence sequence's boundary, written here from the Waudby-Smith et al. formula."""
    rng = np.random.default_rng(DEFAULT_SEED)
    draws = 40_000
    n = np.arange(1, until + 1)
    k = -2 * math.log(alpha)
    rho2 = (k + math.log(k + 1)) / planned
    half = np.sqrt((n * rho2 + 1) / (n * rho2) * 2 * np.log(np.sqrt(n * rho2 + 1) / alpha))
    bound = ratio * np.sqrt(n) * half
    crossed_by = np.zeros(until)
    for _ in range(4):
        walks = np.cumsum(rng.normal(theta, 1.0, (draws // 4, until)), axis=1)
        out = (np.abs(walks) >= bound) & (n >= start)
        first = np.where(out.any(axis=1), out.argmax(axis=1), until)
        crossed_by += np.bincount(first, minlength=until + 1)[:until].cumsum()
    return crossed_by / draws


@pytest.mark.parametrize(("theta", "ratio"), [(0.12, 1.0), (0.0, 1.0), (0.1, 1.08)])
def test_the_confidence_sequence_crossing_probability_matches_a_monte_carlo(theta, ratio):
    until, planned, start = 600, 500, 60
    computed = sequential_design.sequence_crossing_curve(theta, until, 0.05, planned, ratio, start)
    simulated = _sequence_monte_carlo(theta, until, 0.05, planned, ratio, start)
    assert computed[: start - 1] == pytest.approx(0.0, abs=1e-12)
    for n in (100, 300, 500, 600):
        p = simulated[n - 1]
        assert abs(computed[n - 1] - p) <= 4 * math.sqrt(max(p * (1 - p), 1e-4) / 40_000) + 0.004, (
            n,
            computed[n - 1],
            p,
        )


def test_smallest_size_finds_the_first_size_that_reaches_the_target():
    def power(n: int) -> float:
        return float(stats.norm.cdf(math.sqrt(n) * 0.1 - 1.96))

    brute = next(n for n in range(10, 100_000) if power(n) >= 0.8)
    assert sequential_design.smallest_size(power, 10, 100_000) == brute
    assert sequential_design.smallest_size(power, brute, 100_000) == brute
    assert sequential_design.smallest_size(power, 10, brute - 1) is None


def _gaussian_paths(rng: np.random.Generator, campaigns: int, n: int, theta: float) -> sequential.Paths:
    """Paths of a mean of n unit-variance contributions (the estimate and its known standard error)."""
    steps = np.arange(1, n + 1)
    sums = np.cumsum(rng.normal(theta, 1.0, (campaigns, n)), axis=1)
    count = np.broadcast_to(steps, (campaigns, n)).astype(np.int64)
    se = np.broadcast_to(1 / np.sqrt(steps), (campaigns, n)).copy()
    return sequential.Paths(sums / steps, se, count, count, pairs=count)


def test_the_dashboard_rule_keeps_alpha_and_has_the_predicted_power_read_after_every_pair():
    """group_sequential_mask, as the dashboard applies it after every pair: two equal metrics
    settle in at most alpha of the campaigns; a difference is found as often as predicted."""
    rng = np.random.default_rng(DEFAULT_SEED)
    plan = sequential_design.group_sequential_plan(300, 5, 0.05)
    campaigns = 20_000
    null = _gaussian_paths(rng, campaigns, plan.max_pairs, 0.0)
    mask = sequential.group_sequential_mask(null, plan, min_per_class=1)
    fpr = (sequential.first_true(mask) >= 0).mean()
    assert fpr <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / campaigns)
    assert fpr == pytest.approx(0.05, abs=4 * math.sqrt(0.05 * 0.95 / campaigns))
    # Settles only at a look.
    columns = np.flatnonzero(mask.any(axis=0)) + 1
    assert set(columns) <= set(plan.looks)
    # The naive reading (1.96 at every pair) would not keep it.
    naive = (sequential.first_true(sequential.naive_mask(null, 0.05, min_per_class=1)) >= 0).mean()
    assert naive > 0.2
    theta = 0.15
    effect = _gaussian_paths(rng, campaigns, plan.max_pairs, theta)
    power = (sequential.first_true(sequential.group_sequential_mask(effect, plan, min_per_class=1)) >= 0).mean()
    predicted = sequential_design.group_sequential_power(plan, theta)
    assert power == pytest.approx(predicted, abs=4 * math.sqrt(predicted * (1 - predicted) / campaigns))


def test_the_confidence_sequence_power_predicted_is_the_rules_power_on_simulated_paths():
    rng = np.random.default_rng(DEFAULT_SEED)
    planned, theta, campaigns = 400, 0.14, 10_000
    effect = _gaussian_paths(rng, campaigns, planned, theta)
    first = sequential.first_true(sequential.settled_mask(effect, 0.05, planned, min_per_class=30))
    observed = (first >= 0).mean()
    predicted = sequential_design.sequence_crossing_curve(theta, planned, 0.05, planned, 1.0, 30)[-1]
    assert observed == pytest.approx(predicted, abs=4 * math.sqrt(predicted * (1 - predicted) / campaigns) + 0.004)


def test_bad_plans_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="looks: from 1 to 20, got 0"):
        sequential_design.look_counts(100, 0)
    with pytest.raises(ValueError, match=r"the maximum size \(3 pairs\) must be at least the number of looks \(5\)"):
        sequential_design.look_counts(3, 5)
    with pytest.raises(ValueError, match="information fractions must increase"):
        sequential_design.spending_boundaries(np.array([0.5, 0.4, 1.0]), 0.05)
    with pytest.raises(ValueError, match="method: one of confidence_sequence, group_sequential, got 'pocock'"):
        sequential.Question(1, 2, method="pocock")
