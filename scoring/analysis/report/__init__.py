"""Every analysis of every metric configuration, per corpus and for all pairs, as typed results.

:func:`build_report` takes an :class:`AnalysisInput` (NumPy arrays, no Django) and returns a
:class:`Report` of frozen dataclasses, one per section: counts, per-metric results per subset
(the paper's Tables 1-5 plus ROC AUC, correlations with the graded human scale, bootstrap
intervals and the top-k summary), chart data for the page, inter-annotator agreement and the
per-volunteer table. Python reads it by attribute; :func:`report_json` is its one JSON form
(what the dashboard and the API read).

Orientation: thresholds, AUC, EER, ranks and correlations with the human scale use scores
oriented so that higher means closer (LEV and WER negated); Table 1 means, Table 3
correlations and every reported threshold are in the metric's own units, as in the paper.

One module per section (the package's layout is the report's): ``inputs`` (what it is computed
from), ``records`` (the typed report and its JSON), ``subsets``, ``metric`` (one metric on one
subset), ``intervals``, ``charts``, ``volunteers`` (agreement and the volunteers' table) and
``build`` (:func:`build_report`, which assembles them). Everything public is importable from
here, as it was when the report was one module.
"""

from __future__ import annotations

from scoring.analysis.report.build import build_report
from scoring.analysis.report.charts import chart_of, scatter_sample
from scoring.analysis.report.convert import (
    coefficient_of,
    correlation_of,
    interval_pair,
    own_threshold,
    rounded,
    rule_of,
    summary_of,
)
from scoring.analysis.report.inputs import (
    ALL,
    ALL_LABEL,
    ANALYSIS_VERSION,
    NO_ORIGIN_LABEL,
    AnalysisInput,
    BoolArray,
    FloatArray,
    IntArray,
    JudgementRows,
    MetricInfo,
    ReportOptions,
    VolunteerInfo,
    human_labels,
)
from scoring.analysis.report.intervals import Intervals, MetricIntervals, intervals_of, report_intervals, with_intervals
from scoring.analysis.report.metric import metric_subset
from scoring.analysis.report.records import (
    Agreement,
    Auc,
    BestAccuracy,
    BootstrapCounts,
    BootstrapInfo,
    Box,
    Boxes,
    Chart,
    ChartThresholds,
    ClassCorrelations,
    ClassStats,
    CoefficientValue,
    CorrelationValue,
    Counts,
    Eer,
    Excluded,
    IntervalPair,
    MetricResult,
    MetricRow,
    Natural,
    Ordinal,
    RankCurve,
    RankingSummary,
    Report,
    RocCurve,
    ScoreCounts,
    SubsetCounts,
    Summary,
    Tied,
    VolunteerRow,
    WaitState,
    WorstPair,
    report_json,
)
from scoring.analysis.report.subsets import Subset, subsets
from scoring.analysis.report.volunteers import agreement_section, volunteer_section

__all__ = [
    "ALL",
    "ALL_LABEL",
    "ANALYSIS_VERSION",
    "NO_ORIGIN_LABEL",
    "Agreement",
    "AnalysisInput",
    "Auc",
    "BestAccuracy",
    "BoolArray",
    "BootstrapCounts",
    "BootstrapInfo",
    "Box",
    "Boxes",
    "Chart",
    "ChartThresholds",
    "ClassCorrelations",
    "ClassStats",
    "CoefficientValue",
    "CorrelationValue",
    "Counts",
    "Eer",
    "Excluded",
    "FloatArray",
    "IntArray",
    "IntervalPair",
    "Intervals",
    "JudgementRows",
    "MetricInfo",
    "MetricIntervals",
    "MetricResult",
    "MetricRow",
    "Natural",
    "Ordinal",
    "RankCurve",
    "RankingSummary",
    "Report",
    "ReportOptions",
    "RocCurve",
    "ScoreCounts",
    "Subset",
    "SubsetCounts",
    "Summary",
    "Tied",
    "VolunteerInfo",
    "VolunteerRow",
    "WaitState",
    "WorstPair",
    "agreement_section",
    "build_report",
    "chart_of",
    "coefficient_of",
    "correlation_of",
    "human_labels",
    "interval_pair",
    "intervals_of",
    "metric_subset",
    "own_threshold",
    "report_intervals",
    "report_json",
    "rounded",
    "rule_of",
    "scatter_sample",
    "subsets",
    "summary_of",
    "volunteer_section",
    "with_intervals",
]
