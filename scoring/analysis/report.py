"""Every analysis of every metric configuration, per corpus and for all pairs, as plain data.

:func:`build_report` takes an :class:`AnalysisInput` (NumPy arrays, no Django) and returns a
JSON-ready dict: counts, per-metric results per subset (the paper's Tables 1-5 plus ROC AUC,
correlations with the graded human scale, bootstrap intervals and the top-k summary), chart
data for the page, inter-annotator agreement and the per-volunteer table.

Orientation: thresholds, AUC, EER, ranks and correlations with the human scale use scores
oriented so that higher means closer (LEV and WER negated); Table 1 means, Table 3
correlations and every reported threshold are in the metric's own units, as in the paper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.analysis import agreement as agreement_stats
from scoring.analysis.binary import (
    ClassSummary,
    Confusion,
    Ranked,
    ThresholdResult,
    at_threshold,
    best_accuracy,
    box_stats,
    class_summary,
    downsample_indices,
    equal_error_rate,
    rank,
    rank_curves,
    roc,
    roc_auc,
)
from scoring.analysis.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapResult,
    Interval,
    Resampler,
    bootstrap_many,
)
from scoring.analysis.correlation import Correlation, pearson, spearman
from scoring.analysis.disagreements import worst_disagreements
from scoring.analysis.labels import (
    BINARY_OF_CODE,
    DONT_KNOW_CODE,
    ORDINAL_OF_CODE,
    HumanLabels,
    Reference,
    gold_labels,
    volunteer_labels,
)
from scoring.analysis.thresholds import tied_best

# Bump when a change here changes any number of a report (part of the data version).
ANALYSIS_VERSION = "3"  # 2: volunteers carry their pseudonym; 3: charts name their pairs (links to the pair pages)
ALL = "all"
ALL_LABEL = "Global"
NO_ORIGIN_LABEL = "(no origin)"

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class MetricInfo:
    """One metric configuration as the analyses need it."""

    id: int
    name: str
    label: str
    higher_is_closer: bool
    natural_threshold: float | None = None

    @property
    def arrow(self) -> str:
        return "↑" if self.higher_is_closer else "↓"


@dataclass(frozen=True)
class JudgementRows:
    """Campaign judgements that count (training answers left out), one entry per judgement."""

    pair_index: IntArray  # position of the pair in the AnalysisInput arrays
    volunteer: IntArray
    code: IntArray  # labels.LABEL_CODES
    answered_at: FloatArray  # seconds since the epoch; orders judge A / judge B for Cohen's kappa
    response_seconds: FloatArray

    @classmethod
    def empty(cls) -> JudgementRows:
        ints = np.zeros(0, dtype=np.int64)
        floats = np.zeros(0, dtype=np.float64)
        return cls(ints, ints, ints, floats, floats)

    def __len__(self) -> int:
        return len(self.pair_index)


@dataclass(frozen=True)
class VolunteerInfo:
    """A volunteer with their self-assessed level and training-trial results."""

    id: int
    english_level: str
    training_answers: int = 0
    training_correct: int = 0
    pseudonym: str = ""  # as in the exports and the API (a keyed hash of the token)


@dataclass(frozen=True)
class AnalysisInput:
    """One campaign (after filters) as arrays: pairs, judgements, volunteers and scores."""

    pair_ids: IntArray
    origins: list[str]
    edit_distance: FloatArray  # character Levenshtein / longer length (rapidfuzz)
    gold_label: FloatArray  # 1 / 0 / NaN
    gold_score: FloatArray  # graded gold or NaN
    judgements: JudgementRows
    volunteers: list[VolunteerInfo]
    metrics: list[MetricInfo]
    scores: FloatArray  # metrics x pairs; NaN where no usable score
    failed: BoolArray  # metrics x pairs; the scoring failed (counted, excluded)
    training_judgements: int = 0
    sources: list[str] | None = None  # source sentence per pair (groups of hypotheses)
    systems: list[str] | None = None  # system that produced each hypothesis ("" when none)
    external_ids: list[str] | None = None  # the pair's id in its corpus ("" when none), for links

    def __post_init__(self) -> None:
        n = len(self.pair_ids)
        for name in ("edit_distance", "gold_label", "gold_score"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} values for {n} pairs")
        if len(self.origins) != n:
            raise ValueError(f"origins has {len(self.origins)} values for {n} pairs")
        shape = (len(self.metrics), n)
        if self.scores.shape != shape or self.failed.shape != shape:
            raise ValueError(f"scores and failed must be {shape}, got {self.scores.shape} and {self.failed.shape}")


@dataclass(frozen=True)
class ReportOptions:
    """What to compute: the reference, the bootstrap and the size of the chart data."""

    reference: Reference = Reference.VOLUNTEERS
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    confidence: float = 0.95
    curve_points: int = 200  # ROC and rank curves sent to the page (peaks always kept)
    scatter_points: int = 1000  # pairs drawn per metric in the score / edit-distance chart
    worst_pairs: int = 5  # a metric's worst disagreements with the reference, listed per metric
    charts: bool = True
    # False: leave every interval None (the dashboard fills them in from the cpu queue).
    intervals: bool = True


# --- small converters ------------------------------------------------------------------------


def _num(value: float | None, digits: int | None = None) -> float | None:
    """A JSON-safe float: None for missing or non-finite values; statistics at full precision,
    chart coordinates rounded (``digits``) to keep payloads small."""
    if value is None:
        return None
    number = float(value)
    if not math.isfinite(number):
        return None
    return number if digits is None else round(number, digits)


def _interval(value: Interval | None) -> list[float | None] | None:
    return None if value is None else [_num(value.low), _num(value.high)]


def _own(threshold: float | None, metric: MetricInfo) -> float | None:
    """Oriented threshold back to the metric's own units."""
    if threshold is None:
        return None
    return threshold if metric.higher_is_closer else -threshold


def _rule(metric: MetricInfo) -> str:
    return "≥" if metric.higher_is_closer else "≤"


def _confusion(confusion: Confusion) -> dict[str, Any]:
    return {
        "accuracy": _num(confusion.accuracy),
        "f1": _num(confusion.f1),
        "precision": _num(confusion.precision),
        "recall": _num(confusion.recall),
        "tp": int(confusion.tp),
        "fp": int(confusion.fp),
        "tn": int(confusion.tn),
        "fn": int(confusion.fn),
    }


def _summary(summary: ClassSummary) -> dict[str, Any]:
    return {"mean": _num(summary.mean), "std": _num(summary.std), "n": summary.n}


def _correlation(value: Correlation) -> dict[str, Any]:
    return {"r": _num(value.value), "n": value.n, "reason": value.reason}


def _coefficient(value: agreement_stats.Coefficient) -> dict[str, Any]:
    return {
        "value": _num(value.value),
        "observed": _num(value.observed),
        "chance": _num(value.chance),
        "pairs": value.units,
        "reason": value.reason,
    }


# --- subsets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subset:
    key: str
    label: str
    mask: BoolArray


def subsets(origins: list[str]) -> list[Subset]:
    """One subset per origin (corpus) when there are several, then all pairs together ("Global")."""
    values = np.asarray(origins, dtype=object)
    distinct = sorted(set(origins))
    result: list[Subset] = []
    if len(distinct) > 1:
        result = [Subset(origin, origin or NO_ORIGIN_LABEL, values == origin) for origin in distinct]
    # A single corpus (or a corpus filter) is named as such rather than "Global".
    label = distinct[0] if len(distinct) == 1 and distinct[0] else ALL_LABEL
    result.append(Subset(ALL, label, np.ones(len(origins), dtype=bool)))
    return result


# --- one metric on one subset ----------------------------------------------------------------


def _metric_subset(
    metric: MetricInfo,
    raw: FloatArray,
    failed: BoolArray,
    labels: HumanLabels,
    edit_distance: FloatArray,
    mask: BoolArray,
) -> tuple[dict[str, Any], Ranked]:
    """Every point statistic of one metric on one subset; the intervals are left None and
    filled by :func:`apply_intervals` (at once, or later from the cpu queue)."""
    labelled = mask & labels.labelled
    valid = labelled & np.isfinite(raw)
    oriented_all = raw if metric.higher_is_closer else -raw
    scores = oriented_all[valid]
    truth = labels.binary[valid] == 1
    r = rank(scores, truth)
    undefined: dict[str, str] = {}
    if r.n == 0:
        reason = "no labelled pair has a score" if np.any(labelled) else "no labelled pairs"
        undefined.update(best_accuracy=reason, auc=reason, eer=reason)
    elif not r.both_classes:
        only = "paraphrases" if r.negatives == 0 else "non-paraphrases"
        undefined.update(auc=f"only {only} among the labelled pairs", eer=f"only {only} among the labelled pairs")

    result: dict[str, Any] = {
        "pairs": int(np.count_nonzero(labelled)),
        "n": r.n,
        "positives": r.positives,
        "negatives": r.negatives,
        "excluded": {
            "failed": int(np.count_nonzero(labelled & failed)),
            "missing": int(np.count_nonzero(labelled & ~failed & ~np.isfinite(raw))),
        },
    }
    own = raw[valid]
    result["class_stats"] = {"yes": _summary(class_summary(own[truth])), "no": _summary(class_summary(own[~truth]))}

    best: ThresholdResult | None = best_accuracy(r)
    tied = tied_best(r)
    if best is not None:
        result["best_accuracy"] = {
            "threshold": _num(_own(best.threshold, metric)),
            "rule": _rule(metric) if best.threshold is not None else "none",
            **_confusion(best.confusion),
            "ci": None,
            "tied": None
            if tied is None
            else {
                "count": tied.count,
                "highest": _num(_own(tied.highest, metric)),
                "lowest": _num(_own(tied.lowest, metric)),
                "rule": "highest threshold",
            },
        }
    else:
        result["best_accuracy"] = None

    distance = edit_distance[valid]
    result["edit_distance"] = {
        "yes": _correlation(pearson(own[truth], distance[truth])),
        "no": _correlation(pearson(own[~truth], distance[~truth])),
    }

    eer = equal_error_rate(r)
    result["eer"] = (
        None
        if eer is None
        else {
            "rate": _num(eer.rate),
            "threshold": _num(_own(eer.threshold, metric)),
            "ci": None,
        }
    )

    if metric.natural_threshold is not None and r.n:
        oriented_threshold = metric.natural_threshold if metric.higher_is_closer else -metric.natural_threshold
        natural = at_threshold(scores, truth, oriented_threshold)
        result["natural"] = {"threshold": _num(metric.natural_threshold), "rule": _rule(metric), **_confusion(natural)}
    else:
        result["natural"] = None
        if metric.natural_threshold is None:
            undefined["natural"] = "the metric has no natural threshold"

    auc = roc_auc(r)
    result["auc"] = None if auc is None else {"value": _num(auc), "ci": None}

    graded_mask = mask & np.isfinite(labels.graded) & np.isfinite(raw)
    human = labels.graded[graded_mask]
    oriented = oriented_all[graded_mask]
    result["ordinal"] = {
        "pearson": _correlation(pearson(oriented, human)),
        "spearman": _correlation(spearman(oriented, human)),
    }

    curves = rank_curves(r)
    if curves is not None:
        at_f1 = int(np.argmax(curves.f1))
        at_accuracy = int(np.argmax(curves.accuracy))
        result["ranking"] = {
            "f1_max": _num(curves.f1[at_f1]),
            "k_f1_max": at_f1,
            "recall_at_f1_max": _num(curves.recall[at_f1]),
            "precision_at_f1_max": _num(curves.precision[at_f1]),
            "accuracy_max": _num(curves.accuracy[at_accuracy]),
            "k_accuracy_max": at_accuracy,
        }
    else:
        result["ranking"] = None
    result["bootstrap"] = None
    result["undefined"] = undefined
    return result, r


# --- intervals -------------------------------------------------------------------------------

# metric id -> subset key -> {"accuracy", "auc", "eer": [low, high] | None, "resamples",
# "single_class_resamples"} (None below two scored pairs): JSON-ready, cacheable.
Intervals = dict[str, dict[str, dict[str, Any] | None]]


def _interval_dict(result: BootstrapResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {
        "accuracy": _interval(result.accuracy),
        "auc": _interval(result.auc),
        "eer": _interval(result.eer),
        "resamples": result.resamples,
        "single_class_resamples": result.single_class_resamples,
    }


def _intervals_of(jobs: list[tuple[str, str, Ranked, int]], resamples: int, seed: int, confidence: float) -> Intervals:
    """Bootstrap every (metric id, subset key, ranked scores, labelled pairs) job at once."""
    out: Intervals = {}
    for metric_id, key, _, _ in jobs:
        out.setdefault(metric_id, {})[key] = None
    if resamples <= 0:
        return out
    # Draw from every labelled pair of the subset (drawn_from): the same resamples for all metrics.
    results = bootstrap_many(
        [(ranked, labelled) for _, _, ranked, labelled in jobs], Resampler(resamples, seed), confidence
    )
    for (metric_id, key, _, _), result in zip(jobs, results, strict=True):
        out[metric_id][key] = _interval_dict(result)
    return out


def report_intervals(data: AnalysisInput, options: ReportOptions) -> Intervals:
    """The bootstrap intervals of :func:`build_report` alone (what the cpu queue computes for the
    dashboard); :func:`apply_intervals` puts them into a report built without them."""
    labels = human_labels(data, Reference(options.reference))
    jobs = []
    for index, metric in enumerate(data.metrics):
        raw = data.scores[index]
        oriented = raw if metric.higher_is_closer else -raw
        for group in subsets(data.origins):
            labelled = group.mask & labels.labelled
            valid = labelled & np.isfinite(raw)
            ranked = rank(oriented[valid], labels.binary[valid] == 1)
            jobs.append((str(metric.id), group.key, ranked, int(np.count_nonzero(labelled))))
    return _intervals_of(jobs, options.resamples, options.seed, options.confidence)


def apply_intervals(report: dict[str, Any], intervals: Intervals) -> None:
    """Fill the ``ci`` of accuracy, EER and AUC and the ``bootstrap`` counts of every result."""
    for metric_id, per_subset in intervals.items():
        for key, interval in per_subset.items():
            result = report["results"].get(metric_id, {}).get(key)
            if result is None or interval is None:
                continue
            for name, statistic in (("best_accuracy", "accuracy"), ("eer", "eer"), ("auc", "auc")):
                if result.get(name) is not None:
                    result[name]["ci"] = interval[statistic]
            result["bootstrap"] = {
                "resamples": interval["resamples"],
                "single_class_resamples": interval["single_class_resamples"],
            }


# --- charts ----------------------------------------------------------------------------------


def _round_list(values: FloatArray, digits: int = 5) -> list[float | None]:
    return [_num(v, digits) for v in values.tolist()]


def _chart(
    metric: MetricInfo,
    raw: FloatArray,
    labels: HumanLabels,
    edit_distance: FloatArray,
    r: Ranked,
    best_threshold: float | None,
    sample: IntArray,
    options: ReportOptions,
    data: AnalysisInput,
) -> dict[str, Any]:
    labelled = labels.labelled & np.isfinite(raw)
    yes = raw[labelled & (labels.binary == 1)]
    no = raw[labelled & (labels.binary == 0)]
    boxes = {"yes": _box(yes), "no": _box(no)}

    points = sample[np.isfinite(raw[sample])]
    scatter = [[_num(edit_distance[i], 4), _num(raw[i], 5), int(labels.binary[i])] for i in points.tolist()]
    names = data.external_ids or [""] * len(data.pair_ids)
    worst = [
        {
            "pair": int(data.pair_ids[item.index]),
            "name": names[item.index],
            "paraphrase": item.paraphrase,
            "score": _num(item.score, 5),
            "rank": _num(item.rank, 4),
            "disagreement": _num(item.disagreement, 4),
        }
        for item in worst_disagreements(raw, labels.binary, metric.higher_is_closer, options.worst_pairs)
    ]

    chart: dict[str, Any] = {
        "box": boxes,
        "scatter": scatter,
        # The pair of each scatter point (the same order), so a point opens its pair's page.
        "scatter_pairs": [int(data.pair_ids[i]) for i in points.tolist()],
        "worst": worst,
        "thresholds": {"natural": _num(metric.natural_threshold), "best": _num(best_threshold)},
        "roc": None,
        "rank": None,
    }
    curve = roc(r)
    if curve is not None:
        fpr, tpr = curve
        keep = downsample_indices(len(fpr), options.curve_points)
        chart["roc"] = {"fpr": _round_list(fpr[keep], 4), "tpr": _round_list(tpr[keep], 4)}
    curves = rank_curves(r)
    if curves is not None:
        keep = np.union1d(
            downsample_indices(len(curves.k), options.curve_points),
            [int(np.argmax(curves.f1)), int(np.argmax(curves.accuracy))],
        )
        chart["rank"] = {
            "fraction": _round_list(curves.k[keep] / r.n, 4),
            "k": [int(k) for k in curves.k[keep]],
            "accuracy": _round_list(curves.accuracy[keep], 4),
            "f1": _round_list(curves.f1[keep], 4),
        }
    return chart


def _box(values: FloatArray) -> dict[str, Any] | None:
    stats = box_stats(values)
    if stats is None:
        return None
    return {
        "min": _num(stats.min),
        "q1": _num(stats.q1),
        "median": _num(stats.median),
        "q3": _num(stats.q3),
        "max": _num(stats.max),
        "mean": _num(stats.mean),
        "whiskerMin": _num(stats.whisker_min),
        "whiskerMax": _num(stats.whisker_max),
        "outliers": [_num(v) for v in stats.outliers],
        "n": stats.n,
    }


def _scatter_sample(labels: HumanLabels, limit: int, seed: int) -> IntArray:
    """The same labelled pairs for every metric's scatter plot, at most ``limit`` of them."""
    candidates = np.flatnonzero(labels.labelled)
    if len(candidates) <= limit:
        return candidates
    rng = np.random.default_rng([seed, 2])
    return np.sort(rng.choice(candidates, size=limit, replace=False))


# --- agreement and volunteers ----------------------------------------------------------------


def agreement_section(judgements: JudgementRows, n_pairs: int) -> dict[str, Any]:
    """Inter-annotator agreement on the pairs that two or more volunteers judged."""
    ordinal = ORDINAL_OF_CODE[judgements.code] if len(judgements) else np.zeros(0, dtype=np.int64)
    binary = BINARY_OF_CODE[judgements.code] if len(judgements) else np.zeros(0, dtype=np.int8)
    ordinal_counts = agreement_stats.category_counts(judgements.pair_index, ordinal - 1, n_pairs, 4)
    binary_counts = agreement_stats.category_counts(judgements.pair_index, binary.astype(np.int64), n_pairs, 2)
    graded_per_pair = ordinal_counts.sum(axis=1)
    judged = np.bincount(judgements.pair_index, minlength=n_pairs) if len(judgements) else np.zeros(n_pairs)
    multi = int(np.count_nonzero(graded_per_pair >= 2))
    first, second = agreement_stats.first_two(judgements.pair_index, binary.astype(np.int64), judgements.answered_at)
    graded_total = int(binary_counts.sum())
    reason = agreement_stats.NOT_MEASURABLE if len(judgements) else "no judgements yet"
    section: dict[str, Any] = {
        "pairs_judged": int(np.count_nonzero(judged)),
        "pairs_multi": multi,
        "judgements_per_pair": _num(float(np.mean(judged[judged > 0])) if np.any(judged) else None, 3),
        "measurable": multi > 0,
        "reason": None if multi else reason,
        "paraphrase_share": _num(binary_counts[:, 1].sum() / graded_total if graded_total else None),
        "krippendorff_alpha": _coefficient(agreement_stats.krippendorff_alpha(ordinal_counts, [1, 2, 3, 4])),
        "fleiss_kappa": _coefficient(agreement_stats.fleiss_kappa(binary_counts)),
        "gwet_ac1": _coefficient(agreement_stats.gwet_ac1(binary_counts)),
        "cohen_kappa": _coefficient(agreement_stats.cohen_kappa(first, second)),
    }
    if not len(judgements):
        for key in ("krippendorff_alpha", "fleiss_kappa", "gwet_ac1", "cohen_kappa"):
            section[key]["reason"] = reason
    return section


def volunteer_section(judgements: JudgementRows, volunteers: list[VolunteerInfo], n_pairs: int) -> list[dict[str, Any]]:
    """One row per volunteer: judgements, leave-one-out agreement, training accuracy, speed."""
    binary = BINARY_OF_CODE[judgements.code] if len(judgements) else np.zeros(0, dtype=np.int8)
    loo = agreement_stats.leave_one_out_agreement(judgements.pair_index, binary, n_pairs)
    rows: list[dict[str, Any]] = []
    order = np.argsort(judgements.volunteer, kind="stable")
    volunteer_sorted = judgements.volunteer[order]
    for info in volunteers:
        start, end = np.searchsorted(volunteer_sorted, [info.id, info.id + 1])
        mine = order[start:end]
        compared = int(np.count_nonzero(loo.compared[mine]))
        agreed = int(np.count_nonzero(loo.agrees[mine]))
        times = judgements.response_seconds[mine]
        times = times[np.isfinite(times)]
        if len(mine) == 0 and info.training_answers == 0:
            continue
        rows.append(
            {
                "id": info.id,
                "volunteer": info.pseudonym or f"#{info.id}",
                "english_level": info.english_level,
                "judgements": len(mine),
                "dont_know": int(np.count_nonzero(judgements.code[mine] == DONT_KNOW_CODE)),
                "compared": compared,
                "agreement": _num(agreed / compared if compared else None, 4),
                "training_answers": info.training_answers,
                "training_correct": info.training_correct,
                "training_accuracy": _num(
                    info.training_correct / info.training_answers if info.training_answers else None, 4
                ),
                "median_response_seconds": _num(float(np.median(times)) if len(times) else None, 2),
            }
        )
    rows.sort(key=lambda row: (-row["judgements"], row["id"]))
    return rows


# --- the report ------------------------------------------------------------------------------


def human_labels(data: AnalysisInput, reference: Reference) -> HumanLabels:
    """The reference labels of every pair."""
    n = len(data.pair_ids)
    from_volunteers = volunteer_labels(n, data.judgements.pair_index, data.judgements.code)
    if reference is Reference.VOLUNTEERS:
        return from_volunteers
    return gold_labels(data.gold_label, data.gold_score, from_volunteers.judgements, from_volunteers.dont_know)


def build_report(data: AnalysisInput, options: ReportOptions | None = None) -> dict[str, Any]:
    """Compute every table, chart, agreement figure and count for one campaign."""
    options = options or ReportOptions()
    reference = Reference(options.reference)
    labels = human_labels(data, reference)
    n = len(data.pair_ids)
    groups = subsets(data.origins)
    jobs: list[tuple[str, str, Ranked, int]] = []
    sample = _scatter_sample(labels, options.scatter_points, options.seed)

    label_counts = labels.counts()
    done = np.isfinite(data.scores)
    counts: dict[str, Any] = {
        **label_counts,
        "judgements": len(data.judgements),
        "dont_know_judgements": int(np.count_nonzero(data.judgements.code == DONT_KNOW_CODE)),
        "training_judgements": data.training_judgements,
        "volunteers": len(np.unique(data.judgements.volunteer)),
        "metrics": len(data.metrics),
        "scores": int(np.count_nonzero(done)),
        "scores_failed": int(np.count_nonzero(data.failed)),
        "scores_missing": int(np.count_nonzero(~done & ~data.failed)),
    }

    results: dict[str, dict[str, Any]] = {}
    charts: dict[str, Any] = {}
    metric_rows = []
    for index, metric in enumerate(data.metrics):
        raw = data.scores[index]
        failed = data.failed[index]
        per_subset: dict[str, Any] = {}
        for group in groups:
            result, ranked = _metric_subset(metric, raw, failed, labels, data.edit_distance, group.mask)
            per_subset[group.key] = result
            jobs.append((str(metric.id), group.key, ranked, result["pairs"]))
            if group.key == ALL and options.charts:
                best = result["best_accuracy"]
                charts[str(metric.id)] = _chart(
                    metric,
                    raw,
                    labels,
                    data.edit_distance,
                    ranked,
                    best["threshold"] if best else None,
                    sample,
                    options,
                    data,
                )
        results[str(metric.id)] = per_subset
        metric_rows.append(
            {
                "id": metric.id,
                "name": metric.name,
                "label": metric.label,
                "higher_is_closer": metric.higher_is_closer,
                "arrow": metric.arrow,
                "natural_threshold": _num(metric.natural_threshold),
                "scores": {
                    "done": int(np.count_nonzero(done[index])),
                    "failed": int(np.count_nonzero(failed)),
                    "missing": int(np.count_nonzero(~done[index] & ~failed)),
                },
            }
        )

    report = {
        "analysis_version": ANALYSIS_VERSION,
        "reference": reference.value,
        "counts": counts,
        "subsets": [{"key": group.key, "label": group.label, **labels.counts(group.mask)} for group in groups],
        "metrics": metric_rows,
        "results": results,
        "charts": charts,
        "agreement": agreement_section(data.judgements, n),
        "volunteers": volunteer_section(data.judgements, data.volunteers, n),
        "bootstrap": {
            "resamples": options.resamples,
            "seed": options.seed,
            "confidence": options.confidence,
            "method": "percentile",
            "threshold": "re-optimised in every resample",
            "unit": "labelled pairs, drawn with replacement",
            # "computing" when the intervals are left for later (options.intervals False).
            "state": "off" if options.resamples == 0 else "ready" if options.intervals else "computing",
            "message": "",
        },
    }
    if options.intervals and options.resamples > 0:
        apply_intervals(report, _intervals_of(jobs, options.resamples, options.seed, options.confidence))
    return report
