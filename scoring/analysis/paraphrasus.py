"""PARAPHRASUS objectives: a metric judged as a paraphrase detector over corpora with three objectives.

Michail, Clematide & Opitz (COLING 2025, paper 001) give every corpus one objective:

- **classify**: the gold labels say which pairs are paraphrases (MRPC, STS-H, PAWS-X);
- **minimise**: no pair is a paraphrase (STS pairs scored below 3, NLI neutral/contradiction pairs);
- **maximise**: every pair is a paraphrase (TRUE, from the AMR guidelines).

A metric becomes a detector at ONE threshold, the same on every corpus: its natural threshold
where it has one (ParaPLUIE: 0), else the threshold fitted on one named corpus and applied to
all. The figures are those of the benchmark's ``extract_results.py``: the error rate of each
corpus (wrong decisions / decisions, pairs without a usable score left out), the mean error of
each objective over its corpora, and the overall mean of the three objective means (objectives
weighted equally, not corpora nor pairs). The fitted threshold follows the benchmark's
``CalibratedThreshold`` with the 0-1 error objective: the split of the sorted scores with the
fewest errors (the first such split, i.e. the lowest threshold, on ties), placed midway between
the two neighbouring scores, and a pair is called a paraphrase when its score is at or beyond it.
Like the benchmark's code, a split may fall inside a group of tied scores: the midpoint is then the
tied score and ``>=`` calls the whole group a paraphrase, so the fit corpus's error can exceed the
split's count by the tied pairs on the wrong side (kept so that thresholds match the benchmark's).
The benchmark rounds each corpus's error to 0.1 % before averaging; here the exact rates are averaged.

No interval, and so no variant over volunteers: the figures rest on the corpora's imported gold
labels and on objectives fixed per corpus, with no volunteer's judgement in them (the table's
caption says so, :data:`.rater_bootstrap.OBJECTIVES_SENTENCE`).

Pure numpy: no Django.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray

from scoring.analysis.report import MetricInfo

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


class Objective(StrEnum):
    CLASSIFY = "classify"
    MINIMISE = "minimise"
    MAXIMISE = "maximise"


OBJECTIVE_ORDER: tuple[Objective, ...] = (Objective.CLASSIFY, Objective.MINIMISE, Objective.MAXIMISE)
# Above every oriented score: the fitted rule "nothing is a paraphrase" (the benchmark adds 1e-6).
NOTHING_STEP = 1e-6


@dataclass(frozen=True)
class Corpus:
    """One corpus: its pairs' gold labels (1 / 0 / NaN) and every metric's raw scores on them."""

    name: str
    objective: Objective
    gold: FloatArray  # per pair; only read for classify (NaN: not labelled, not counted)
    scores: FloatArray  # metrics x pairs, raw (NaN: no usable score)

    def expected(self) -> FloatArray:
        """The label a perfect detector gives each pair: the gold (classify), 0 (minimise), 1 (maximise)."""
        if self.objective is Objective.CLASSIFY:
            return np.asarray(self.gold, dtype=np.float64)
        value = 0.0 if self.objective is Objective.MINIMISE else 1.0
        return np.full(self.scores.shape[1], value)


@dataclass(frozen=True)
class FittedThreshold:
    """A threshold fitted on one corpus (oriented units: higher = closer)."""

    threshold: float
    calibration_error: float
    calibration_size: int


def fit_threshold(oriented: FloatArray, labels: BoolArray) -> FittedThreshold | None:
    """The threshold with the fewest errors on ``labels`` (see the module docstring); None when empty."""
    n = len(oriented)
    if n == 0:
        return None
    order = np.argsort(oriented, kind="stable")
    values = oriented[order]
    truth = labels[order].astype(bool)
    positives_below = np.concatenate(([0], np.cumsum(truth)))
    negatives_below = np.concatenate(([0], np.cumsum(~truth)))
    errors = positives_below + (negatives_below[-1] - negatives_below)
    k = int(np.argmin(errors))
    if k == 0:
        threshold = float(values[0])
    elif k == n:
        threshold = float(values[-1]) + NOTHING_STEP
    else:
        threshold = float((values[k - 1] + values[k]) / 2)
    return FittedThreshold(threshold, float(errors[k] / n), n)


@dataclass(frozen=True)
class CorpusError:
    """One metric on one corpus at its threshold."""

    corpus: str
    objective: Objective
    pairs: int  # decisions counted (expected label known, score usable)
    wrong: int
    missing: int  # pairs with an expected label and no usable score (left out, as the benchmark does)

    @property
    def error(self) -> float | None:
        return self.wrong / self.pairs if self.pairs else None


@dataclass(frozen=True)
class MetricObjectives:
    """One metric as a detector: its threshold, its error per corpus and per objective, overall."""

    metric: MetricInfo
    threshold: float | None  # in the metric's own units; None: no threshold (see ``note``)
    threshold_source: str  # "natural", "fitted on <corpus>" or "" when none
    rule: str  # e.g. "paraphrase when lev <= 0.42"
    corpora: list[CorpusError] = field(default_factory=list)
    objective_means: dict[Objective, float | None] = field(default_factory=dict)
    overall: float | None = None
    note: str = ""


@dataclass(frozen=True)
class ParaphrasusResult:
    """The whole table: corpora by objective, one row per metric."""

    corpora: list[tuple[str, Objective, int]]  # name, objective, pairs with an expected label
    fit_on: str | None
    metrics: list[MetricObjectives]
    missing_objectives: list[Objective]  # objectives with no corpus: no overall mean then


def _oriented(raw: FloatArray, metric: MetricInfo) -> FloatArray:
    return raw if metric.higher_is_closer else -raw


def _raw_threshold(threshold: float, metric: MetricInfo) -> float:
    return threshold if metric.higher_is_closer else -threshold


def _rule(metric: MetricInfo, raw_threshold: float) -> str:
    sign = ">=" if metric.higher_is_closer else "<="
    return f"paraphrase when {metric.label} {sign} {raw_threshold:.6g}"


def default_fit_corpus(corpora: Sequence[Corpus]) -> str | None:
    """The classify corpus with the most labelled pairs of both classes (name order on ties)."""
    best: tuple[int, str] | None = None
    for corpus in corpora:
        if corpus.objective is not Objective.CLASSIFY:
            continue
        expected = corpus.expected()
        labelled = expected[np.isfinite(expected)]
        if not (np.any(labelled == 1) and np.any(labelled == 0)):
            continue
        key = (-len(labelled), corpus.name)
        if best is None or key < best:
            best = key
    return None if best is None else best[1]


def _check_corpora(corpora: Sequence[Corpus], metrics: Sequence[MetricInfo], fit_on: str | None) -> None:
    """Raise ``ValueError`` for two corpora with one name, misshapen scores or an unknown ``fit_on``."""
    names = [corpus.name for corpus in corpora]
    if len(set(names)) != len(names):
        raise ValueError("two corpora have the same name")
    for corpus in corpora:
        if corpus.scores.shape != (len(metrics), len(corpus.gold)):
            raise ValueError(f"corpus {corpus.name!r}: scores must be {len(metrics)} x {len(corpus.gold)}")
    if fit_on is not None and fit_on not in names:
        raise ValueError(f"no corpus {fit_on!r} to fit the threshold on (corpora: {', '.join(names) or 'none'})")


def _threshold(
    metric: MetricInfo, index: int, fit_corpus: Corpus | None, expected: dict[str, FloatArray]
) -> tuple[float | None, str, str]:
    """The metric's oriented threshold (None when there is none), where it comes from, and why it is missing.

    The natural threshold when the metric has one; else the accuracy-maximising threshold on
    the fitting corpus's expected labels, when that corpus has both classes among the scored pairs.
    """
    if metric.natural_threshold is not None:
        # Orienting is a sign change: the same function turns raw units into oriented ones.
        return _raw_threshold(metric.natural_threshold, metric), "natural", ""
    if fit_corpus is None:
        return None, "", "no natural threshold and no classify corpus with both classes to fit one on"
    truth = expected[fit_corpus.name]
    oriented = _oriented(fit_corpus.scores[index], metric)
    usable = np.isfinite(truth) & np.isfinite(oriented)
    labels = truth[usable] == 1
    if not (np.any(labels) and np.any(~labels)):
        return None, "", f"{fit_corpus.name} has not both classes among the pairs {metric.label} scored"
    fitted = fit_threshold(oriented[usable], labels)
    assert fitted is not None
    return fitted.threshold, f"fitted on {fit_corpus.name}", ""


def _corpus_errors(
    metric: MetricInfo, index: int, threshold: float, corpora: Sequence[Corpus], expected: dict[str, FloatArray]
) -> list[CorpusError]:
    """The metric's errors at ``threshold`` (oriented units) in each corpus, with the pairs it left unscored."""
    errors: list[CorpusError] = []
    for corpus in corpora:
        truth = expected[corpus.name]
        oriented = _oriented(corpus.scores[index], metric)
        labelled = np.isfinite(truth)
        usable = labelled & np.isfinite(oriented)
        predicted = oriented[usable] >= threshold
        wrong = int(np.count_nonzero(predicted != (truth[usable] == 1)))
        errors.append(
            CorpusError(
                corpus.name,
                corpus.objective,
                int(np.count_nonzero(usable)),
                wrong,
                int(np.count_nonzero(labelled & ~usable)),
            )
        )
    return errors


def _metric_objectives(
    metric: MetricInfo,
    index: int,
    fit_corpus: Corpus | None,
    corpora: Sequence[Corpus],
    expected: dict[str, FloatArray],
) -> MetricObjectives:
    """One metric's row: its threshold, errors per corpus, mean error per objective and overall."""
    threshold, source, note = _threshold(metric, index, fit_corpus, expected)
    if threshold is None:
        return MetricObjectives(
            metric, None, "", "", [], dict.fromkeys(OBJECTIVE_ORDER, None), None, note or "no threshold"
        )
    errors = _corpus_errors(metric, index, threshold, corpora, expected)
    means: dict[Objective, float | None] = {}
    for objective in OBJECTIVE_ORDER:
        rates = [row.error for row in errors if row.objective is objective and row.error is not None]
        means[objective] = float(np.mean(rates)) if rates else None
    overall = None
    if all(value is not None for value in means.values()):
        overall = float(np.mean([value for value in means.values() if value is not None]))
    raw = _raw_threshold(threshold, metric)
    return MetricObjectives(
        metric,
        raw,
        source,
        _rule(metric, raw),
        errors,
        means,
        overall,
        "" if overall is not None else "no overall mean: " + _missing_text(means),
    )


def paraphrasus(
    corpora: Sequence[Corpus], metrics: Sequence[MetricInfo], *, fit_on: str | None = None
) -> ParaphrasusResult:
    """Error rates of each metric per corpus, per objective and overall (see the module docstring).

    ``fit_on`` names the corpus whose expected labels fit the threshold of metrics without a
    natural one (default: :func:`default_fit_corpus`). Raises ``ValueError`` for an unknown
    ``fit_on``, two corpora with one name, or scores whose shape does not fit the metrics.
    """
    _check_corpora(corpora, metrics, fit_on)
    fit_name = fit_on if fit_on is not None else default_fit_corpus(corpora)
    fit_corpus = next((corpus for corpus in corpora if corpus.name == fit_name), None)
    expected = {corpus.name: corpus.expected() for corpus in corpora}
    present = {corpus.objective for corpus in corpora}
    missing_objectives = [objective for objective in OBJECTIVE_ORDER if objective not in present]
    rows = [_metric_objectives(metric, index, fit_corpus, corpora, expected) for index, metric in enumerate(metrics)]
    summary = [
        (corpus.name, corpus.objective, int(np.count_nonzero(np.isfinite(expected[corpus.name])))) for corpus in corpora
    ]
    return ParaphrasusResult(summary, fit_name if fit_corpus is not None else None, rows, missing_objectives)


def _missing_text(means: dict[Objective, float | None]) -> str:
    absent = [objective.value for objective, value in means.items() if value is None]
    return f"no corpus with {' or '.join(absent)} pairs"


def percent(value: float | None) -> str:
    """An error rate as the benchmark prints it (one decimal, in %), or a dash."""
    return "-" if value is None or math.isnan(value) else f"{100 * value:.1f}"
