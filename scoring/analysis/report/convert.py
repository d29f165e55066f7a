"""Small converters from the statistics' results to the report's records (rounding, None for undefined)."""

from __future__ import annotations

import math

from scoring.analysis import agreement as agreement_stats
from scoring.analysis.binary import (
    ClassSummary,
)
from scoring.analysis.bootstrap import (
    Interval,
)
from scoring.analysis.correlation import Correlation
from scoring.analysis.report.inputs import MetricInfo
from scoring.analysis.report.records import CoefficientValue, CorrelationValue, IntervalPair, Summary

# --- small converters ------------------------------------------------------------------------


def rounded(value: float | None, digits: int | None = None) -> float | None:
    """A JSON-safe float: None for missing or non-finite values; statistics at full precision,
    chart coordinates rounded (``digits``) to keep payloads small."""
    if value is None:
        return None
    number = float(value)
    if not math.isfinite(number):
        return None
    return number if digits is None else round(number, digits)


def interval_pair(value: Interval | None) -> IntervalPair | None:
    return None if value is None else (rounded(value.low), rounded(value.high))


def own_threshold(threshold: float | None, metric: MetricInfo) -> float | None:
    """Oriented threshold back to the metric's own units."""
    if threshold is None:
        return None
    return threshold if metric.higher_is_closer else -threshold


def rule_of(metric: MetricInfo) -> str:
    return "≥" if metric.higher_is_closer else "≤"


def summary_of(summary: ClassSummary) -> Summary:
    return Summary(rounded(summary.mean), rounded(summary.std), summary.n)


def correlation_of(value: Correlation) -> CorrelationValue:
    return CorrelationValue(rounded(value.value), value.n, value.reason)


def coefficient_of(value: agreement_stats.Coefficient, reason: str | None = None) -> CoefficientValue:
    return CoefficientValue(
        rounded(value.value), rounded(value.observed), rounded(value.chance), value.units, reason or value.reason
    )
