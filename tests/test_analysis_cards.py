"""Calibration of a log-odds metric against a per-pair share, and its cross-fitted temperature,
checked against implementations written here (a loop over bins, SciPy's minimize_scalar on the
log-loss) on data whose answer is known: a calibrated generator gives ECE ≈ 0 and T ≈ 1, the
same scores multiplied by 3 give T ≈ 3; and the robustness card's ranking measures computed
for many source groups at once equal the per-group functions, ties included."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from scoring.analysis.bootstrap import DEFAULT_SEED
from scoring.analysis.calibration import cross_fitted_temperature, fit_temperature, fold_of_pairs, reliability
from scoring.analysis.cards import calibration_card, yes_share
from scoring.analysis.labels import LABEL_CODES
from scoring.analysis.robustness import group_r_precision, group_spearman, rows_r_precision, rows_spearman


def calibrated(n: int = 4000, answers: int = 5, seed: int = DEFAULT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Log-odds scores and, per pair, the share of ``answers`` volunteers saying yes with P = expit(score)."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(0.0, 2.0, n)
    share = rng.binomial(answers, 1 / (1 + np.exp(-scores))) / answers
    return scores, share


def ece_by_loop(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    total = 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        inside = [i for i in range(len(p)) if low <= p[i] < high or (b == bins - 1 and p[i] == 1.0)]
        if inside:
            total += len(inside) / len(p) * abs(np.mean(y[inside]) - np.mean(p[inside]))
    return total


def temperature_by_scipy(scores: np.ndarray, y: np.ndarray) -> float:
    def log_loss(t: float) -> float:
        p = np.clip(1 / (1 + np.exp(-scores / t)), 1e-15, 1 - 1e-15)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))

    return float(minimize_scalar(log_loss, bounds=(0.05, 50.0), method="bounded", options={"xatol": 1e-9}).x)


def test_ece_equals_a_loop_over_bins() -> None:
    scores, share = calibrated(n=600)
    p = 1 / (1 + np.exp(-3 * scores))
    result = reliability(p, share)
    assert result is not None
    assert result.ece == pytest.approx(ece_by_loop(p, share), abs=1e-12)
    assert result.brier == pytest.approx(np.mean((p - share) ** 2))
    assert sum(b.n for b in result.bins) == 600


def test_a_calibrated_judge_has_ece_near_zero_and_temperature_one() -> None:
    scores, share = calibrated()
    card = calibration_card(1, "judge", scores, share, seed=DEFAULT_SEED)
    assert card is not None and card.pairs == 4000
    assert card.ece is not None and card.ece < 0.02
    assert card.temperature == pytest.approx(1.0, abs=0.06)
    assert card.temperature == pytest.approx(temperature_by_scipy(scores, share), abs=1e-5)


def test_scores_three_times_too_sharp_give_temperature_three_and_the_fix() -> None:
    scores, share = calibrated()
    card = calibration_card(1, "judge", 3 * scores, share, seed=DEFAULT_SEED)
    assert card is not None
    assert card.temperature == pytest.approx(3.0, abs=0.15)
    assert card.temperature == pytest.approx(temperature_by_scipy(3 * scores, share), abs=1e-5)
    assert all(t == pytest.approx(3.0, abs=0.2) for t in card.fold_temperatures)
    # Over-confident before, calibrated after: the ECE after T is that of held-out probabilities.
    assert card.ece is not None and card.ece > 0.05
    assert card.ece_after is not None and card.ece_after < 0.02


def test_each_fold_temperature_is_fitted_without_its_own_pairs() -> None:
    scores, share = calibrated(n=500)
    scores = 2.5 * scores
    fitted = cross_fitted_temperature(scores, share, folds=5, seed=DEFAULT_SEED)
    assert fitted is not None
    assert np.array_equal(fitted.fold, fold_of_pairs(500, 5, DEFAULT_SEED))
    assert np.bincount(fitted.fold).tolist() == [100] * 5
    for k, temperature in enumerate(fitted.temperatures):
        train = fitted.fold != k
        assert temperature == pytest.approx(temperature_by_scipy(scores[train], share[train]), abs=1e-5)
        held = ~train
        assert np.allclose(fitted.probabilities[held], 1 / (1 + np.exp(-scores[held] / temperature)))
    # Changing fold 0's answers changes every T but fold 0's own.
    changed = share.copy()
    changed[fitted.fold == 0] = 1 - changed[fitted.fold == 0]
    again = cross_fitted_temperature(scores, changed, folds=5, seed=DEFAULT_SEED)
    assert again is not None
    assert again.temperatures[0] == pytest.approx(fitted.temperatures[0], abs=1e-12)
    assert all(abs(a - b) > 1e-3 for a, b in zip(again.temperatures[1:], fitted.temperatures[1:], strict=True))  # type: ignore[operator]


def test_no_temperature_when_scores_do_not_rise_with_the_answers() -> None:
    scores, share = calibrated(n=200)
    assert fit_temperature(-scores, share) is None
    assert fit_temperature(np.array([]), np.array([])) is None
    # Perfectly separated: T would be 0.
    assert fit_temperature(np.array([-1.0, -2.0, 1.0, 2.0]), np.array([0.0, 0.0, 1.0, 1.0])) is None
    assert cross_fitted_temperature(scores[:9], share[:9], folds=5) is None


def test_yes_share_counts_paraphrase_answers_and_leaves_dont_know_out() -> None:
    codes = np.array(
        [
            LABEL_CODES["same_meaning"],
            LABEL_CODES["mostly_similar"],
            LABEL_CODES["very_different"],
            LABEL_CODES["dont_know"],
            LABEL_CODES["slightly_similar"],
            LABEL_CODES["dont_know"],
        ]
    )
    share = yes_share(3, np.array([0, 0, 0, 0, 1, 2]), codes)
    assert share[0] == pytest.approx(2 / 3) and share[1] == 0.0 and np.isnan(share[2])


def test_ranking_rows_equal_the_per_group_measures_with_ties() -> None:
    rng = np.random.default_rng(DEFAULT_SEED)
    for size in (2, 3, 4, 5):
        swaps = np.array([rng.permutation(size) for _ in range(300)], dtype=np.float64)
        swaps[::7, 1] = swaps[::7, 0]  # some tied expected ranks
        scores = rng.integers(0, 3, size=(300, size)).astype(np.float64)  # many tied scores
        scores[::11] = 1.0  # constant rows: Spearman 0
        spearman = rows_spearman(swaps, scores)
        r_precision = rows_r_precision(swaps, scores)
        for i in range(300):
            s = swaps[i].astype(np.int64)
            assert spearman[i] == pytest.approx(group_spearman(s, scores[i]), abs=1e-12)
            assert r_precision[i] == pytest.approx(group_r_precision(s, scores[i]), abs=1e-12)
