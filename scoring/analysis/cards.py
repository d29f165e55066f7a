"""The dashboard's two cards of a metric beside its agreement figures.

* **Robustness** (:mod:`.robustness`): each metric's scores on the campaign's probe set (the
  campaign itself if it is one, else the latest built from it), loaded as a :class:`ProbeScores`
  by ``scoring.reports.robustness``. Every ParaPLUIE template is a metric configuration of its
  own, so each template gets its own card. Its intervals resample source groups only and have no
  variant over volunteers (unlike the agreement figures, :mod:`.rater_bootstrap`): no volunteer
  judged a probe, and what a probe should score (below its meaning-keeping control, in the
  expected swap order) holds by construction, so there is no human judgement to resample. The
  table's caption says so (:data:`.rater_bootstrap.PROBES_SENTENCE`).
* **Calibration** (:mod:`.calibration`) of the log-odds metrics (ParaPLUIE: natural threshold 0,
  higher is closer): P(yes) = 1 / (1 + e^-score) against, per pair, the share of the volunteers'
  yes/no answers that call it a paraphrase (Mostly similar or Same meaning; Don't know left
  out), or the imported gold label (0 or 1) when the dashboard's reference is the gold label.
  A reliability diagram, its expected calibration error, and a cross-fitted temperature with
  the ECE after it.

Numbers are stored as JSON shows them: None for undefined or non-finite values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from scoring.analysis.calibration import (
    DEFAULT_BINS,
    DEFAULT_FOLDS,
    Calibration,
    cross_fitted_temperature,
    fit_temperature,
    reliability,
)
from scoring.analysis.labels import BINARY_OF_CODE
from scoring.analysis.robustness import AGAINST_CONTROL, Figure, ProbeTable, robustness_card

if TYPE_CHECKING:  # report.py imports this module
    from scoring.analysis.report import AnalysisInput

# The state of the robustness section: no probe set, a probe set no metric has scored yet, cards.
NO_PROBE_SET = "none"
UNSCORED = "unscored"
READY = "ready"


@dataclass(frozen=True)
class ProbeScores:
    """A probe set's pairs and every metric's raw scores on them (metrics x probe pairs, NaN
    where a metric has none); ``metrics``: (configuration id, label, higher is closer)."""

    probe_set: int
    campaign: str  # the probe campaign's slug
    groups: NDArray[np.int64]
    kinds: tuple[str, ...]
    swaps: NDArray[np.int64]
    metrics: list[tuple[int, str, bool]]
    scores: NDArray[np.float64]


@dataclass(frozen=True)
class CardFigure:
    """One figure: value, 95% interval over resampled source groups, the groups it rests on."""

    value: float | None
    low: float | None
    high: float | None
    groups: int
    comparisons: int


@dataclass(frozen=True)
class MetricCard:
    metric: int
    label: str
    below_control: dict[str, CardFigure]  # by probe kind (paws_swap, number, date, negation)
    swap_spearman: CardFigure
    swap_r_precision: CardFigure
    asymmetry: CardFigure
    length_effect: CardFigure
    scale: float | None  # SD of the scores of the original pairs (the unit of the last two)


@dataclass(frozen=True)
class RobustnessSection:
    state: str  # NO_PROBE_SET, UNSCORED or READY
    probe_set: int | None
    probe_campaign: str
    pairs: int
    groups: int
    kinds: list[str]
    resamples: int
    seed: int
    cards: list[MetricCard]


@dataclass(frozen=True)
class ReliabilityPoint:
    low: float
    high: float
    n: int
    mean_probability: float | None
    share: float | None


@dataclass(frozen=True)
class CalibrationCard:
    """One log-odds metric: reliability before and after the cross-fitted temperature."""

    metric: int
    label: str
    pairs: int
    ece: float | None
    brier: float | None
    bins: list[ReliabilityPoint]
    temperature: float | None  # fitted on every pair (what to apply to new pairs)
    fold_temperatures: list[float | None]  # fold k's T, fitted without fold k's pairs
    ece_after: float | None  # on the held-out probabilities
    brier_after: float | None
    bins_after: list[ReliabilityPoint]


@dataclass(frozen=True)
class CalibrationSection:
    target: str  # "volunteers" (share of yes answers) or "gold" (the imported label)
    folds: int
    seed: int
    bins: int
    cards: list[CalibrationCard]


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _card_figure(figure: Figure) -> CardFigure:
    low = high = None
    if figure.interval is not None:
        low, high = _num(figure.interval.low), _num(figure.interval.high)
    return CardFigure(_num(figure.value), low, high, figure.groups, figure.comparisons)


def robustness_section(probes: ProbeScores | None, resamples: int, seed: int) -> RobustnessSection:
    """One card per metric with scores on the probe set, in the probe set's metric order."""
    if probes is None:
        return RobustnessSection(NO_PROBE_SET, None, "", 0, 0, list(AGAINST_CONTROL), resamples, seed, [])
    draws: dict[int, NDArray[np.float64]] = {}  # one draw of the group counts per group count
    cards = []
    for row, (config_id, label, higher) in enumerate(probes.metrics):
        scores = probes.scores[row] if higher else -probes.scores[row]
        if np.all(np.isnan(scores)):
            continue
        table = ProbeTable(groups=probes.groups, kinds=probes.kinds, swaps=probes.swaps, scores=scores)
        card = robustness_card(table, resamples=resamples, seed=seed, draws=draws)
        cards.append(
            MetricCard(
                metric=config_id,
                label=label,
                below_control={share.kind: _card_figure(share.share) for share in card.below_control},
                swap_spearman=_card_figure(card.swap_spearman),
                swap_r_precision=_card_figure(card.swap_r_precision),
                asymmetry=_card_figure(card.asymmetry),
                length_effect=_card_figure(card.length_effect),
                scale=_num(card.scale),
            )
        )
    return RobustnessSection(
        READY if cards else UNSCORED,
        probes.probe_set,
        probes.campaign,
        len(probes.kinds),
        len(np.unique(probes.groups)),
        list(AGAINST_CONTROL),
        resamples,
        seed,
        cards,
    )


def is_log_odds(natural_threshold: float | None, higher_is_closer: bool) -> bool:
    """A score read as log-odds (ParaPLUIE's log-ratio): natural threshold 0, higher is closer."""
    return natural_threshold == 0 and higher_is_closer


def yes_share(pairs: int, pair_index: NDArray[np.int64], codes: NDArray[np.int64]) -> NDArray[np.float64]:
    """Per pair, the share of its yes/no judgements that call it a paraphrase (NaN with none)."""
    binary = BINARY_OF_CODE[codes]
    answered = binary >= 0
    yes = np.bincount(pair_index[answered], weights=(binary[answered] == 1).astype(np.float64), minlength=pairs)
    total = np.bincount(pair_index[answered], minlength=pairs).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, yes / np.maximum(total, 1), np.nan)


def _points(result: Calibration | None) -> list[ReliabilityPoint]:
    if result is None:
        return []
    return [
        ReliabilityPoint(b.low, b.high, b.n, _num(b.mean_probability), _num(b.paraphrase_share)) for b in result.bins
    ]


def calibration_card(
    metric: int,
    label: str,
    scores: NDArray[np.float64],
    targets: NDArray[np.float64],
    *,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    bins: int = DEFAULT_BINS,
) -> CalibrationCard | None:
    """The calibration card of one metric on the pairs with a finite score and a target."""
    keep = np.isfinite(scores) & np.isfinite(targets)
    s, y = scores[keep], targets[keep]
    before = reliability(1.0 / (1.0 + np.exp(-s)), y, bins)
    if before is None:
        return None
    fitted = cross_fitted_temperature(s, y, folds, seed)
    after = None if fitted is None else reliability(fitted.probabilities, y, bins)
    return CalibrationCard(
        metric=metric,
        label=label,
        pairs=len(s),
        ece=_num(before.ece),
        brier=_num(before.brier),
        bins=_points(before),
        temperature=_num(fit_temperature(s, y)),
        fold_temperatures=[] if fitted is None else [_num(t) for t in fitted.temperatures],
        ece_after=None if after is None else _num(after.ece),
        brier_after=None if after is None else _num(after.brier),
        bins_after=_points(after),
    )


def calibration_section(
    metrics: list[tuple[int, str]],
    scores: NDArray[np.float64],
    targets: NDArray[np.float64],
    target: str,
    *,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    bins: int = DEFAULT_BINS,
) -> CalibrationSection:
    """Cards of the log-odds ``metrics`` (their rows of ``scores``, metrics x pairs) against ``targets``."""
    cards = []
    for row, (metric, label) in enumerate(metrics):
        card = calibration_card(metric, label, scores[row], targets, folds=folds, seed=seed, bins=bins)
        if card is not None:
            cards.append(card)
    return CalibrationSection(target, folds, seed, bins, cards)


def report_cards(data: AnalysisInput, reference: str, resamples: int, seed: int) -> Cards:
    """Both cards of a campaign's report: what ``build_report`` calls."""
    n = len(data.pair_ids)
    if reference == "gold":
        targets = data.gold_label.astype(np.float64)
    else:
        targets = yes_share(n, data.judgements.pair_index, data.judgements.code)
    target = "gold" if reference == "gold" else "volunteers"
    rows = [i for i, m in enumerate(data.metrics) if is_log_odds(m.natural_threshold, m.higher_is_closer)]
    metrics = [(data.metrics[i].id, data.metrics[i].label) for i in rows]
    scores = data.scores[rows] if rows else np.zeros((0, n))
    return Cards(
        robustness=robustness_section(data.probes, resamples, seed),
        calibration=calibration_section(metrics, scores, targets, target, seed=seed),
    )


@dataclass(frozen=True)
class Cards:
    robustness: RobustnessSection
    calibration: CalibrationSection
