"""The bounds the adaptive-selection benchmark prints, checked against what they claim: the
variance of a difference estimator under Poisson sampling (simulated here), and the sample sizes
of the designs (the simple random sample's closed form)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.adaptive_selection import model_assisted_needed, neyman_needed, poisson_needed
from scoring.analysis import selection

SEED = 20250101  # the project's seed (PARAEVAL_SEED's default)


def population(rng: np.random.Generator, n: int) -> tuple[selection.Influences, np.ndarray, np.ndarray]:
    """Three metrics' standardised influences on a pool of ``n`` pairs, its labels and a model's
    probabilities that see the labels through noise."""
    positive = rng.random(n) < 0.4
    scores = np.vstack([rng.normal(size=n) + k * positive for k in (1.0, 0.6, 0.3)])
    labels = positive.astype(int)
    influences = selection.standardised_influences(scores, np.clip(labels.astype(float), 1e-6, 1 - 1e-6))
    model = 1 / (1 + np.exp(-(2.0 * labels - 1 + rng.normal(scale=1.5, size=n))))
    return influences, labels, model


def test_the_difference_estimator_is_unbiased_with_the_variance_the_bound_uses() -> None:
    """Σ predicted + Σ_S residual / π over Poisson samples: its mean is the pool's total influence
    and its variance Σ (1/π - 1) residual², the formula behind the model-assisted bound."""
    rng = np.random.default_rng(SEED)
    influences, labels, model = population(rng, 80)
    realised = np.where(labels == 1, influences.positive, influences.negative)
    predicted = model * influences.positive + (1 - model) * influences.negative
    residual = realised - predicted
    pi = np.clip(rng.uniform(0.1, 0.9, size=80), 0, 1)
    draws = 40_000
    estimates = np.empty((draws, realised.shape[0]))
    for k in range(draws):
        chosen = rng.random(80) < pi
        estimates[k] = predicted.sum(axis=1) + (residual[:, chosen] / pi[chosen]).sum(axis=1)
    truth = realised.sum(axis=1)
    se = estimates.std(axis=0, ddof=1) / math.sqrt(draws)
    assert np.all(np.abs(estimates.mean(axis=0) - truth) < 4 * se)
    expected = np.sum((1 / pi - 1) * residual**2, axis=1)
    assert estimates.var(axis=0, ddof=1) == pytest.approx(expected, rel=0.05)


def test_the_designs_sample_sizes_on_known_cases() -> None:
    rng = np.random.default_rng(SEED)
    z = rng.normal(size=500)
    squares = z**2
    # Equal probabilities n / N: Σ (N/n - 1) z² reaches the target at the closed-form size.
    target = 2.7 * float(np.sum(squares))  # not at an exact size, where rounding decides
    closed = math.ceil(500 * np.sum(squares) / (target + np.sum(squares)))
    assert poisson_needed(np.ones(500), squares, target) == closed
    # Neyman's design never needs more than the balanced sample it matches, and equal sizes
    # leave nothing to gain.
    assert neyman_needed(np.abs(z), 200) <= 200
    assert neyman_needed(np.ones(500), 200) == 200
    # A model that knows every label leaves no residual: nothing to judge for the same precision.
    influences, labels, model = population(rng, 120)
    perfect = model_assisted_needed(influences, labels, labels.astype(float), 60)
    assert perfect["balanced order"] == 0
    assert perfect["knowing the residuals"] <= 1
    # A useful but imperfect model: each design needs fewer than the balanced plain estimator,
    # and the design that knows the residuals the fewest.
    needed = model_assisted_needed(influences, labels, model, 60)
    assert needed["knowing the residuals"] <= needed["planned (π ∝ expected residual)"] <= 60
    assert needed["balanced order"] < 60
