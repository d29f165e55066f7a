"""PARAPHRASUS objectives, checked against a computation written independently here (plain
Python loops over every candidate threshold, the benchmark's averaging written out by hand)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scoring.analysis.paraphrasus import (
    Corpus,
    Objective,
    default_fit_corpus,
    fit_threshold,
    paraphrasus,
)
from scoring.analysis.report import MetricInfo

SIMILARITY = MetricInfo(id=1, name="sim", label="sim", higher_is_closer=True)
DISTANCE = MetricInfo(id=2, name="lev", label="lev", higher_is_closer=False)
NATURAL = MetricInfo(id=3, name="pp", label="pp", higher_is_closer=True, natural_threshold=0.0)


def independent_fit(scores: list[float], labels: list[bool]) -> tuple[float, int]:
    """Fewest errors over every split of the sorted scores, the lowest split on ties (brute force)."""
    values = sorted(scores)
    candidates = [values[0]] + [(values[k - 1] + values[k]) / 2 for k in range(1, len(values))] + [values[-1] + 1e-6]
    best: tuple[int, float] | None = None
    for threshold in candidates:
        errors = sum((score >= threshold) != label for score, label in zip(scores, labels, strict=True))
        if best is None or errors < best[0]:
            best = (errors, threshold)
    assert best is not None
    return best[1], best[0]


def independent_errors(scores: list[float], expected: list[float], threshold: float, higher: bool) -> float:
    wrong = total = 0
    for score, truth in zip(scores, expected, strict=True):
        if math.isnan(truth) or math.isnan(score):
            continue
        called = score >= threshold if higher else score <= threshold
        total += 1
        wrong += called != (truth == 1)
    return wrong / total


def test_fit_matches_brute_force_on_random_scores():
    rng = np.random.default_rng(20250101)
    for _ in range(30):
        n = int(rng.integers(5, 60))
        labels = rng.random(n) < 0.4
        scores = rng.normal(size=n) + labels * rng.uniform(0, 2)  # distinct values: no ties
        fitted = fit_threshold(scores, labels)
        threshold, errors = independent_fit(scores.tolist(), labels.tolist())
        assert fitted is not None
        assert fitted.threshold == pytest.approx(threshold)
        assert fitted.calibration_error == pytest.approx(errors / n)


def test_fit_extremes():
    # Every pair a paraphrase: the lowest score; none: just above the highest.
    assert fit_threshold(np.array([0.2, 0.5, 0.9]), np.array([True, True, True])).threshold == 0.2
    assert fit_threshold(np.array([0.2, 0.5, 0.9]), np.array([False, False, False])).threshold == 0.9 + 1e-6
    assert fit_threshold(
        np.array([0.1, 0.3, 0.6, 0.8]), np.array([False, False, True, True])
    ).threshold == pytest.approx(0.45)


def _corpora(rng: np.random.Generator) -> tuple[list[Corpus], list[MetricInfo]]:
    metrics = [SIMILARITY, DISTANCE, NATURAL]

    def block(n: int, objective: Objective, name: str, positive_rate: float) -> Corpus:
        gold = (rng.random(n) < positive_rate).astype(np.float64)
        signal = gold + rng.normal(scale=0.8, size=n)
        scores = np.vstack([signal, 1 - 0.3 * signal, signal - 0.5])
        scores[0, rng.integers(0, n)] = np.nan  # a failed score is left out
        if objective is Objective.CLASSIFY:
            gold[rng.integers(0, n, size=3)] = np.nan  # unlabelled pairs are not counted
        return Corpus(name, objective, gold, scores)

    corpora = [
        block(120, Objective.CLASSIFY, "mrpc", 0.66),
        block(60, Objective.CLASSIFY, "sts-h", 0.3),
        block(80, Objective.MINIMISE, "sts", 0.0),
        block(40, Objective.MAXIMISE, "true", 1.0),
    ]
    return corpora, metrics


def test_error_rates_objective_means_and_overall_match_an_independent_computation():
    corpora, metrics = _corpora(np.random.default_rng(7))
    result = paraphrasus(corpora, metrics, fit_on="sts-h")
    assert result.fit_on == "sts-h" and result.missing_objectives == []
    fit = next(corpus for corpus in corpora if corpus.name == "sts-h")
    for index, row in enumerate(result.metrics):
        metric = metrics[index]
        higher = metric.higher_is_closer
        if metric.natural_threshold is not None:
            threshold = metric.natural_threshold
            assert row.threshold_source == "natural"
        else:
            usable = ~np.isnan(fit.gold) & ~np.isnan(fit.scores[index])
            oriented = fit.scores[index][usable] * (1 if higher else -1)
            oriented_threshold, _ = independent_fit(oriented.tolist(), (fit.gold[usable] == 1).tolist())
            threshold = oriented_threshold if higher else -oriented_threshold
            assert row.threshold_source == "fitted on sts-h"
        assert row.threshold == pytest.approx(threshold)
        by_objective: dict[str, list[float]] = {"classify": [], "minimise": [], "maximise": []}
        for corpus, error in zip(corpora, row.corpora, strict=True):
            if corpus.objective is Objective.CLASSIFY:
                expected = corpus.gold.tolist()
            else:
                expected = [1.0 if corpus.objective is Objective.MAXIMISE else 0.0] * len(corpus.gold)
            rate = independent_errors(corpus.scores[index].tolist(), expected, threshold, higher)
            assert error.error == pytest.approx(rate)
            by_objective[corpus.objective.value].append(rate)
        means = {name: sum(rates) / len(rates) for name, rates in by_objective.items()}
        assert {objective.value: value for objective, value in row.objective_means.items()} == pytest.approx(means)
        assert row.overall == pytest.approx(sum(means.values()) / 3)


def test_objectives_weigh_equally_not_corpora():
    # Errors 10% and 30% (classify), 20% (minimise), 50% (maximise): overall (20 + 20 + 50) / 3 = 30%,
    # where a mean over the four corpora would say 27.5%.
    def corpus(name: str, objective: Objective, wrong: int, n: int = 10) -> Corpus:
        positive = objective is not Objective.MINIMISE
        gold = np.full(n, 1.0 if positive else 0.0)
        scores = np.where(np.arange(n) < wrong, -1.0, 1.0) if positive else np.where(np.arange(n) < wrong, 1.0, -1.0)
        return Corpus(name, objective, gold, scores[None, :])

    corpora = [
        corpus("a", Objective.CLASSIFY, 1),
        corpus("b", Objective.CLASSIFY, 3),
        corpus("c", Objective.MINIMISE, 2),
        corpus("d", Objective.MAXIMISE, 5),
    ]
    (row,) = paraphrasus(corpora, [NATURAL]).metrics
    assert [error.error for error in row.corpora] == [0.1, 0.3, 0.2, 0.5]
    assert row.objective_means == {
        Objective.CLASSIFY: pytest.approx(0.2),
        Objective.MINIMISE: pytest.approx(0.2),
        Objective.MAXIMISE: pytest.approx(0.5),
    }
    assert row.overall == pytest.approx(0.3)
    assert row.rule == "paraphrase when pp >= 0"


def test_a_distance_is_called_a_paraphrase_below_its_threshold():
    gold = np.array([1.0, 1.0, 0.0, 0.0])
    lev = np.array([[0.1, 0.2, 0.7, 0.9]])
    (row,) = paraphrasus([Corpus("m", Objective.CLASSIFY, gold, lev)], [DISTANCE]).metrics
    assert row.threshold == pytest.approx(0.45)
    assert row.rule == "paraphrase when lev <= 0.45"
    assert row.corpora[0].error == 0.0


def test_without_an_objective_there_is_no_overall_and_no_fit_corpus_is_said():
    gold = np.array([1.0, 0.0, 1.0])
    corpora = [Corpus("m", Objective.CLASSIFY, gold, np.array([[0.9, 0.1, 0.8]]))]
    result = paraphrasus(corpora, [SIMILARITY])
    assert result.missing_objectives == [Objective.MINIMISE, Objective.MAXIMISE]
    (row,) = result.metrics
    assert row.overall is None and row.note == "no overall mean: no corpus with minimise or maximise pairs"
    only_max = [Corpus("t", Objective.MAXIMISE, np.full(3, np.nan), np.array([[0.9, 0.1, 0.8]]))]
    (row,) = paraphrasus(only_max, [SIMILARITY]).metrics
    assert row.threshold is None
    assert row.note == "no natural threshold and no classify corpus with both classes to fit one on"
    with pytest.raises(ValueError, match="no corpus 'x' to fit the threshold on"):
        paraphrasus(corpora, [SIMILARITY], fit_on="x")


def test_default_fit_corpus_is_the_largest_classify_corpus_with_both_classes():
    one = Corpus("big-one-class", Objective.CLASSIFY, np.ones(50), np.zeros((1, 50)))
    small = Corpus("small", Objective.CLASSIFY, np.array([1.0, 0.0]), np.zeros((1, 2)))
    large = Corpus("large", Objective.CLASSIFY, np.array([1.0, 0.0, 1.0, np.nan]), np.zeros((1, 4)))
    assert default_fit_corpus([one, small, large]) == "large"
