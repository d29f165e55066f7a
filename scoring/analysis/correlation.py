"""Pearson and Spearman correlations (SciPy) that say why they are undefined instead of NaN.

Used for Table 3 (score against normalised edit distance inside each class) and for the
correlation with the graded human scale (Shen et al. 2022, Table 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

# Below three points a correlation says nothing (two points always give +-1).
MIN_POINTS = 3


@dataclass(frozen=True)
class Correlation:
    """A coefficient, the number of points it rests on, and the reason when it is undefined."""

    value: float | None
    n: int
    reason: str | None = None


def _checked(
    x: NDArray[np.floating], y: NDArray[np.floating]
) -> tuple[NDArray[np.float64], NDArray[np.float64], Correlation | None]:
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"x and y must have the same length, got {a.shape} and {b.shape}")
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    n = len(a)
    if n < MIN_POINTS:
        return a, b, Correlation(None, n, f"fewer than {MIN_POINTS} pairs")
    if np.all(a == a[0]):
        return a, b, Correlation(None, n, "all scores are equal")
    if np.all(b == b[0]):
        return a, b, Correlation(None, n, "the other variable is constant")
    return a, b, None


def pearson(x: NDArray[np.floating], y: NDArray[np.floating]) -> Correlation:
    """Pearson's r over the points where both values are finite."""
    a, b, undefined = _checked(x, y)
    if undefined:
        return undefined
    return Correlation(float(stats.pearsonr(a, b).statistic), len(a))


def spearman(x: NDArray[np.floating], y: NDArray[np.floating]) -> Correlation:
    """Spearman's rho (average ranks for ties) over the points where both values are finite."""
    a, b, undefined = _checked(x, y)
    if undefined:
        return undefined
    return Correlation(float(stats.spearmanr(a, b).statistic), len(a))
