"""Agreement between volunteers: on the pairs that several of them judged, and per volunteer.

Coefficients, all on the judgements of campaign pairs (training answers never count):

- Krippendorff's alpha on the ordinal 4-point scale, Don't know missing (``krippendorff``
  package; any number of judges per pair, gaps allowed).
- Fleiss' kappa on the binary label (paraphrase or not), in the form that allows a different
  number of judges per pair (Fleiss 1971 with Gwet's 2014 treatment of missing ratings:
  observed agreement over pairs with two or more judges, category shares averaged over pairs).
  With the same number of judges everywhere it is Fleiss' original kappa. Implemented here
  from the definition (statsmodels is not a dependency); tested on published examples.
- Cohen's kappa (scikit-learn) on the binary label of pairs with exactly two binary
  judgements. Volunteers are anonymous and many, so "judge A" is the earlier answer and
  "judge B" the later one.
- Gwet's AC1 on the binary label (Gwet 2008), robust to the skewed classes of paraphrase
  corpora that pull kappa down (the "kappa paradox").

Per volunteer: judgements, agreement with the majority of the *other* judges of the same pair
(leave-one-out, so a judge never agrees with a majority they helped form), training-trial
accuracy, English level and median response time.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import krippendorff
import numpy as np
from numpy.typing import NDArray
from sklearn.metrics import cohen_kappa_score

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Coefficient:
    """A chance-corrected agreement coefficient with its parts, or why it is not measurable."""

    value: float | None
    observed: float | None = None  # percent agreement p_a
    chance: float | None = None  # chance agreement p_e
    units: int = 0  # pairs it rests on (two or more ratings)
    reason: str | None = None


def category_counts(unit: IntArray, category: IntArray, n_units: int, n_categories: int) -> IntArray:
    """Counts matrix (units x categories) from one row per rating; ``category < 0`` = missing."""
    unit = np.asarray(unit, dtype=np.int64)
    category = np.asarray(category, dtype=np.int64)
    keep = category >= 0
    flat = unit[keep] * n_categories + category[keep]
    return np.bincount(flat, minlength=n_units * n_categories).reshape(n_units, n_categories).astype(np.int64)


def _observed(counts: IntArray) -> tuple[float | None, int]:
    """Mean over units with two or more ratings of the share of agreeing rater pairs."""
    raters = counts.sum(axis=1)
    multi = raters >= 2
    units = int(np.count_nonzero(multi))
    if units == 0:
        return None, 0
    agreeing = (counts[multi] * (counts[multi] - 1)).sum(axis=1)
    return float(np.mean(agreeing / (raters[multi] * (raters[multi] - 1)))), units


def _shares(counts: IntArray) -> NDArray[np.float64]:
    """Category shares averaged over the units with at least one rating."""
    raters = counts.sum(axis=1)
    rated = raters >= 1
    shares: NDArray[np.float64] = (counts[rated] / raters[rated, None]).mean(axis=0)
    return shares


NOT_MEASURABLE = "no pair has two or more judgements (one judge per pair): agreement is not measurable"


def fleiss_kappa(counts: IntArray) -> Coefficient:
    """Fleiss' kappa: (p_a - p_e) / (1 - p_e) with p_e = sum of squared category shares."""
    observed, units = _observed(counts)
    if observed is None:
        return Coefficient(None, reason=NOT_MEASURABLE)
    chance = float(np.sum(_shares(counts) ** 2))
    if chance >= 1.0:
        return Coefficient(None, observed, chance, units, "every judgement is in the same category")
    return Coefficient((observed - chance) / (1 - chance), observed, chance, units)


def gwet_ac1(counts: IntArray) -> Coefficient:
    """Gwet's AC1: p_e = sum_k pi_k (1 - pi_k) / (q - 1) over the q categories of ``counts``."""
    observed, units = _observed(counts)
    if observed is None:
        return Coefficient(None, reason=NOT_MEASURABLE)
    q = counts.shape[1]
    if q < 2:
        raise ValueError("Gwet's AC1 needs at least two categories")
    shares = _shares(counts)
    chance = float(np.sum(shares * (1 - shares)) / (q - 1))
    return Coefficient((observed - chance) / (1 - chance), observed, chance, units)


def krippendorff_alpha(
    counts: IntArray, values: list[int], level: Literal["nominal", "ordinal", "interval", "ratio"] = "ordinal"
) -> Coefficient:
    """Krippendorff's alpha from a units x values counts matrix (``krippendorff`` package)."""
    raters = counts.sum(axis=1)
    pairable = counts[raters >= 2]
    if len(pairable) == 0:
        return Coefficient(None, reason=NOT_MEASURABLE)
    if np.count_nonzero(pairable.sum(axis=0)) < 2:
        return Coefficient(None, units=len(pairable), reason="every judgement has the same value")
    value = krippendorff.alpha(value_counts=pairable, value_domain=values, level_of_measurement=level)
    return Coefficient(float(value), units=len(pairable))


def cohen_kappa(first: IntArray, second: IntArray) -> Coefficient:
    """Cohen's kappa between two sequences of binary labels (scikit-learn)."""
    a = np.asarray(first)
    b = np.asarray(second)
    if len(a) == 0:
        return Coefficient(None, reason="no pair has exactly two binary judgements")
    observed = float(np.mean(a == b))
    if len(np.unique(np.concatenate([a, b]))) < 2:
        return Coefficient(None, observed, 1.0, len(a), "every judgement is in the same category")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float(cohen_kappa_score(a, b, labels=[0, 1]))
    chance = (observed - value) / (1 - value) if value != 1 else None
    return Coefficient(value, observed, chance, len(a))


def first_two(unit: IntArray, label: IntArray, order_key: NDArray[np.float64]) -> tuple[IntArray, IntArray]:
    """Labels of the earlier and later judgement of every unit with exactly two (non-missing)."""
    unit = np.asarray(unit, dtype=np.int64)
    label = np.asarray(label, dtype=np.int64)
    keep = label >= 0
    unit, label, key = unit[keep], label[keep], np.asarray(order_key, dtype=np.float64)[keep]
    if len(unit) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    order = np.lexsort((key, unit))
    unit, label = unit[order], label[order]
    per_unit = np.bincount(unit)
    two = per_unit[unit] == 2
    unit, label = unit[two], label[two]
    return label[0::2], label[1::2]


@dataclass(frozen=True)
class LeaveOneOut:
    """Per judgement: whether the other judges of its pair have a majority, and agreement with it."""

    compared: NDArray[np.bool_]
    agrees: NDArray[np.bool_]


def leave_one_out_agreement(unit: IntArray, binary: NDArray[np.int8], n_units: int) -> LeaveOneOut:
    """Compare each binary judgement (1/0; -1 = Don't know) with the majority of the *other*
    judges of the same pair; a judgement is compared only where they have a strict majority."""
    unit = np.asarray(unit, dtype=np.int64)
    binary = np.asarray(binary, dtype=np.int8)
    yes = np.bincount(unit[binary == 1], minlength=n_units)
    no = np.bincount(unit[binary == 0], minlength=n_units)
    others_yes = yes[unit] - (binary == 1)
    others_no = no[unit] - (binary == 0)
    compared = (binary >= 0) & (others_yes != others_no)
    majority = others_yes > others_no
    agrees = compared & ((binary == 1) == majority)
    return LeaveOneOut(compared=compared, agrees=agrees)
