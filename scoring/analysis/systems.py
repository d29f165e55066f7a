"""System-level view and groups of hypotheses sharing a source.

Systems (WMT's system-level meta-evaluation): when pairs carry the system that produced their
hypothesis and there are two or more systems, each system's human paraphrase rate and mean
ordinal score beside each metric's mean; the system-level Pearson and Kendall between the
metric's means and the human means; and Soft Pairwise Accuracy (Thompson et al. 2024): for
every two systems, p-values that the first beats the second from the human scores and from the
metric's scores (the same seeded permutations), SPA = mean of 1 - |p_human - p_metric|.

Which test for two systems: Thompson et al. assume both systems scored the same segments. Two
systems are compared *paired* (sign flips of per-source differences) only when they share their
sources: the shared sources are at least :data:`SHARED_SOURCES` of each system's sources.
Otherwise (disjoint sources, or a few shared by chance) a two-sample permutation over *all*
items of both systems: a paired test on 2-3 accidentally shared sources would drop the rest.

SPA's interval: a bootstrap that keeps the design (sources resampled with all their items in
every system when pairs name a source, else items within each system), the same resample for
the human and every metric, each p-value recomputed on it. p-values of resampled data are
biased (duplicated items make systems look more different than they are, so bootstrap SPA
drifts away from the estimate): the percentile interval is taken of the bootstrap distribution
shifted so that its median is the estimate (the bootstrap's own bias removed), clipped to
[0, 1]; it therefore always contains the estimate.

Groups (several hypotheses for one source, paper 004): per group, the Spearman correlation of
the metric with the human scale and the R-Precision (the share of relevant hypotheses among the
metric's R best-scored ones, R = the group's relevant hypotheses), averaged over groups.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from scoring.analysis.rater_bootstrap import JudgementTable, VolunteerRelabeller

FloatArray = NDArray[np.float64]
MIN_SYSTEMS = 2
# Two systems are compared paired when their shared sources are at least this share of each
# system's sources (Thompson et al.'s setting is 1.0: every system scores the same segments).
SHARED_SOURCES = 0.9
# ... and at least two sources are shared (one difference cannot be permuted).
MIN_SHARED = 2
# SPA's interval nests permutations in bootstrap resamples: fewer of each than elsewhere keeps
# it to seconds (systems x metrics x SPA_BOOTSTRAP x SPA_PERMUTATIONS means per system pair).
SPA_BOOTSTRAP = 200
SPA_PERMUTATIONS = 200
_CHUNK = 256


@dataclass(frozen=True)
class SystemRow:
    system: str
    pairs: int
    paraphrase_rate: float | None  # among the system's labelled pairs
    mean_ordinal: float | None
    metric_means: list[float | None]  # one per metric, own units


@dataclass(frozen=True)
class SystemMetric:
    metric: int
    pearson: float | None
    kendall: float | None
    spa: float | None
    reason: str | None = None
    spa_interval: list[float] | None = None  # bootstrap [low, high], re-centred on the estimate
    # The same with the volunteers resampled too (two-way); None without volunteers' judgements.
    spa_interval_two_way: list[float] | None = None


@dataclass(frozen=True)
class SystemPair:
    """How two systems were compared, and the human p-value that the first beats the second."""

    first: str
    second: str
    paired: bool  # sign flips over shared sources; else a two-sample permutation over all items
    items: int  # shared sources (paired) or items of both systems (two-sample)
    p_human: float


@dataclass(frozen=True)
class SystemView:
    systems: list[SystemRow]
    metrics: list[SystemMetric]
    system_pairs: int
    paired_by_source: bool  # every system pair compared paired on shared sources
    spa_resamples: int = 0  # bootstrap resamples of SPA's interval (SPA_PERMUTATIONS permutations each)
    pairs: list[SystemPair] | None = None
    paired_pairs: int = 0  # system pairs compared paired (the others: two-sample permutations)
    shared_sources_rule: float = SHARED_SOURCES
    spa_two_way_volunteers: int = 0  # volunteers resampled in SPA's two-way interval (0: none)


def _mean(values: FloatArray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if len(finite) else None


def _missing(names: list[str], metric_means: list[float | None], human_means: FloatArray) -> str | None:
    """Why a metric has no system-level figures, naming the systems; None when it has them."""

    def systems(which: list[str]) -> str:
        return f"system {which[0]} has" if len(which) == 1 else f"systems {', '.join(which)} have"

    no_score = [name for name, mean in zip(names, metric_means, strict=True) if mean is None]
    if no_score:
        return f"{systems(no_score)} no score of this metric"
    no_human = [name for name, mean in zip(names, human_means.tolist(), strict=True) if not math.isfinite(mean)]
    if no_human:
        return f"{systems(no_human)} no human score"
    return None


def _p_greater(a: FloatArray, b: FloatArray, resamples: int, seed: int, salt: int) -> float:
    """One-sided two-sample permutation p-value that mean(a) > mean(b) (labels shuffled),
    as ``scipy.stats.permutation_test(permutation_type="independent")`` computes it."""
    observed = a.mean() - b.mean()
    joined = np.concatenate((a, b))
    rng = np.random.default_rng([seed, len(a), len(b), salt])
    null = np.empty(resamples)
    for first in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - first)
        shuffled = rng.permuted(np.broadcast_to(joined, (size, len(joined))), axis=1)
        null[first : first + size] = shuffled[:, : len(a)].mean(axis=1) - shuffled[:, len(a) :].mean(axis=1)
    gamma = abs(observed) * 1e-12 + 1e-12
    return float((np.count_nonzero(null >= observed - gamma) + 1) / (resamples + 1))


def _p_greater_paired(differences: FloatArray, resamples: int, seed: int, salt: int) -> float:
    """One-sided sign-flip p-value that the mean of ``differences`` is above 0; every flip
    pattern once when they fit in ``resamples`` (exact), else random flips (+1 / +1)."""
    n = len(differences)
    observed = differences.mean()
    if n <= 16 and 2**n <= resamples:
        signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)
        null = signs @ differences / n
        adjustment = 0
    else:
        rng = np.random.default_rng([seed, n, salt, 1])
        null = np.concatenate(
            [
                np.where(rng.random((min(_CHUNK, resamples - first), n)) < 0.5, -1.0, 1.0) @ differences / n
                for first in range(0, resamples, _CHUNK)
            ]
        )
        adjustment = 1
    gamma = abs(observed) * 1e-12 + 1e-12
    return float((np.count_nonzero(null >= observed - gamma) + adjustment) / (len(null) + adjustment))


def shared_sources(a: set[str], b: set[str]) -> list[str] | None:
    """The sources two systems are compared on paired, or None for a two-sample comparison:
    shared sources at least :data:`SHARED_SOURCES` of each system's sources and :data:`MIN_SHARED`."""
    shared = a & b
    if len(shared) >= MIN_SHARED and len(shared) >= SHARED_SOURCES * max(len(a), len(b)):
        return sorted(shared)
    return None


def system_p_values(
    values: FloatArray, systems: list[str], names: list[str], sources: list[str] | None, resamples: int, seed: int
) -> tuple[list[float], list[tuple[bool, int]]]:
    """p-value that system i beats system j, for every i < j of ``names`` (NaN values left out),
    and per system pair (compared paired?, items compared)."""
    system_array = np.asarray(systems, dtype=object)
    source_array = np.asarray(sources, dtype=object) if sources is not None else None
    out: list[float] = []
    how: list[tuple[bool, int]] = []
    for salt, (first, second) in enumerate(combinations(names, 2)):
        a_mask = (system_array == first) & np.isfinite(values)
        b_mask = (system_array == second) & np.isfinite(values)
        if source_array is not None:
            shared = shared_sources(set(source_array[a_mask]), set(source_array[b_mask]))
            if shared is not None:
                a = _per_source(values[a_mask], source_array[a_mask], shared)
                b = _per_source(values[b_mask], source_array[b_mask], shared)
                out.append(_p_greater_paired(a - b, resamples, seed, salt))
                how.append((True, len(shared)))
                continue
        if not np.any(a_mask) or not np.any(b_mask):
            out.append(math.nan)
            how.append((False, 0))
            continue
        out.append(_p_greater(values[a_mask], values[b_mask], resamples, seed, salt))
        how.append((False, int(np.count_nonzero(a_mask) + np.count_nonzero(b_mask))))
    return out, how


def _per_source(values: FloatArray, sources: NDArray[np.object_], shared: list[str]) -> FloatArray:
    index = {source: position for position, source in enumerate(shared)}
    sums = np.zeros(len(shared))
    counts = np.zeros(len(shared))
    for value, source in zip(values.tolist(), sources.tolist(), strict=True):
        if source in index:
            sums[index[source]] += value
            counts[index[source]] += 1
    return sums / counts


def soft_pairwise_accuracy(human_p: list[float], metric_p: list[float]) -> float | None:
    """Thompson et al. (2024): mean over system pairs of 1 - |p_human - p_metric|."""
    h, m = np.asarray(human_p, dtype=np.float64), np.asarray(metric_p, dtype=np.float64)
    keep = np.isfinite(h) & np.isfinite(m)
    return float(np.mean(1 - np.abs(h[keep] - m[keep]))) if np.any(keep) else None


def system_view(
    systems: list[str],
    sources: list[str] | None,
    binary: NDArray[np.int8],
    graded: FloatArray,
    metric_ids: list[int],
    oriented: FloatArray,
    own: FloatArray,
    resamples: int = 1000,
    seed: int = 0,
    spa_resamples: int = SPA_BOOTSTRAP,
    confidence: float = 0.95,
    judgements: JudgementTable | None = None,
) -> SystemView | None:
    """The system-level view; None when fewer than two systems are named.

    ``spa_resamples``: bootstrap resamples of SPA's interval (0: none). ``judgements``: the
    volunteers' judgements behind ``graded`` (pairs numbered as here); when given, SPA also gets
    the two-way interval, each resample's human scores recomputed from a draw of the volunteers."""
    names = sorted({name for name in systems if name})
    if len(names) < MIN_SYSTEMS:
        return None
    system_array = np.asarray(systems, dtype=object)
    rows = []
    for name in names:
        mine = system_array == name
        labelled = mine & (binary >= 0)
        rows.append(
            SystemRow(
                system=name,
                pairs=int(np.count_nonzero(mine)),
                paraphrase_rate=float(np.mean(binary[labelled] == 1)) if np.any(labelled) else None,
                mean_ordinal=_mean(graded[mine]),
                metric_means=[_mean(own[row][mine]) for row in range(len(metric_ids))],
            )
        )
    human_p, how = system_p_values(graded, systems, names, sources, resamples, seed)
    pairs = [
        SystemPair(first, second, paired, items, p)
        for (first, second), (paired, items), p in zip(combinations(names, 2), how, human_p, strict=True)
    ]
    human_means = np.array([np.nan if r.mean_ordinal is None else r.mean_ordinal for r in rows])
    results = []
    for row, metric in enumerate(metric_ids):
        # A mean of 0.0 is a mean (BLEU is 0 on every pair of a poor system): only None is missing.
        raw_means = [_mean(oriented[row][system_array == name]) for name in names]
        means = np.array([math.nan if mean is None else mean for mean in raw_means])
        missing = _missing(names, raw_means, human_means)
        if missing:
            results.append(SystemMetric(metric, None, None, None, missing))
            continue
        metric_p, _ = system_p_values(oriented[row], systems, names, sources, resamples, seed)
        spa = soft_pairwise_accuracy(human_p, metric_p)
        pearson = kendall = None
        reason = None
        if len(names) >= 3 and np.ptp(means) > 0 and np.ptp(human_means) > 0:
            pearson = float(stats.pearsonr(means, human_means).statistic)
            kendall = float(stats.kendalltau(means, human_means, variant="b").statistic)
        else:
            reason = "system-level correlations need three systems with different means"
        results.append(SystemMetric(metric, pearson, kendall, spa, reason))
    defined = [row for row, result in enumerate(results) if result.spa is not None]
    if spa_resamples > 0 and defined:
        relabel = VolunteerRelabeller(judgements, seed) if judgements is not None and judgements.volunteers else None
        intervals, two_way = _spa_intervals(
            systems, sources, graded, oriented[defined], names, spa_resamples, seed, confidence, relabel
        )
        for index, row in enumerate(defined):
            estimate = results[row].spa
            assert estimate is not None
            results[row] = replace(
                results[row],
                spa_interval=_recentred(intervals[index], estimate, confidence),
                spa_interval_two_way=None if two_way is None else _recentred(two_way[index], estimate, confidence),
            )
    paired_count = sum(1 for paired, _ in how if paired)
    return SystemView(
        rows,
        results,
        len(human_p),
        paired_count == len(how),
        spa_resamples if defined else 0,
        pairs,
        paired_count,
        SHARED_SOURCES,
        judgements.volunteers if judgements is not None and spa_resamples > 0 and defined else 0,
    )


def _recentred(draws: FloatArray, estimate: float, confidence: float) -> list[float] | None:
    """Percentile interval of the bootstrap SPAs shifted so that their median is the estimate."""
    finite = draws[np.isfinite(draws)]
    if not len(finite):
        return None
    tail = (1 - confidence) / 2 * 100
    shifted = finite - np.median(finite) + estimate
    low, high = np.percentile(shifted, [tail, 100 - tail])
    return [float(min(max(low, 0.0), estimate)), float(max(min(high, 1.0), estimate))]


def _spa_intervals(
    systems: list[str],
    sources: list[str] | None,
    graded: FloatArray,
    oriented: FloatArray,
    names: list[str],
    resamples: int,
    seed: int,
    confidence: float,
    relabel: VolunteerRelabeller | None = None,
) -> tuple[FloatArray, FloatArray | None]:
    """Bootstrap SPAs (rows of ``oriented`` x resamples): sources drawn with all their items
    (pairing kept) when pairs name a source, else items drawn within each system. With
    ``relabel``, beside them the two-way SPAs: the same draws of items and permutations, the
    human scores of each resample recomputed from a draw of the volunteers (the metrics' p-values
    do not depend on the volunteers: computed once for both)."""
    system_array = np.asarray(systems, dtype=object)
    source_array = np.asarray(sources, dtype=object) if sources is not None else None
    if source_array is not None:
        _, source_of = np.unique(source_array, return_inverse=True)
        order = np.argsort(source_of, kind="stable")
        starts = np.searchsorted(source_of[order], np.arange(source_of.max() + 1))
        units = np.split(order, starts[1:])
    else:
        units = []
    members = [np.flatnonzero(system_array == name) for name in names]
    rng = np.random.default_rng([seed, 53])
    spa = np.full((len(oriented), resamples), np.nan)
    spa_two_way = np.full((len(oriented), resamples), np.nan) if relabel is not None else None
    for resample in range(resamples):
        if units:
            picked = rng.integers(0, len(units), size=len(units))
            drawn = np.concatenate([units[unit] for unit in picked])
            # A source drawn twice counts twice: each draw is its own source.
            drawn_sources: list[str] | None = [
                str(draw) for draw, unit in enumerate(picked) for _ in range(len(units[unit]))
            ]
        else:
            drawn = np.concatenate([rng.choice(items, size=len(items), replace=True) for items in members])
            drawn_sources = None
        drawn_systems = system_array[drawn].tolist()
        # The same permutations (seed) for the human and every metric, as in the point estimate.
        inner_seed = seed + 1 + resample
        human_p, _ = system_p_values(graded[drawn], drawn_systems, names, drawn_sources, SPA_PERMUTATIONS, inner_seed)
        human_two_way = None
        if relabel is not None:
            drawn_graded = relabel.draw()[1][drawn]
            human_two_way, _ = system_p_values(
                drawn_graded, drawn_systems, names, drawn_sources, SPA_PERMUTATIONS, inner_seed
            )
        for row in range(len(oriented)):
            metric_p, _ = system_p_values(
                oriented[row][drawn], drawn_systems, names, drawn_sources, SPA_PERMUTATIONS, inner_seed
            )
            value = soft_pairwise_accuracy(human_p, metric_p)
            spa[row, resample] = math.nan if value is None else value
            if spa_two_way is not None and human_two_way is not None:
                value = soft_pairwise_accuracy(human_two_way, metric_p)
                spa_two_way[row, resample] = math.nan if value is None else value
    return spa, spa_two_way


# Why a group has no Spearman (the first that applies) or no R-Precision.
HUMAN_TOO_FEW = "fewer than two hypotheses with a human score"
HUMAN_TIED = "the human scale gives every hypothesis the same value"
METRIC_TOO_FEW = "a metric scored fewer than two of the hypotheses"
METRIC_TIED = "a metric gives every hypothesis the same score"
NO_RELEVANT = "no relevant hypothesis (R = 0)"
ALL_RELEVANT = "every hypothesis relevant (R-Precision is 1 by construction)"
METRIC_MISSING = "a metric did not score every labelled hypothesis"


@dataclass(frozen=True)
class GroupMetric:
    """One metric's per-group averages: over the groups where *every* metric is defined (the
    same groups for all metrics), and over all groups with an undefined value counted as 0."""

    metric: int
    groups: int  # groups where this metric's Spearman is defined
    spearman: float | None  # mean over the common groups
    r_groups: int  # groups where this metric's R-Precision is defined
    r_precision: float | None  # mean over the common R groups
    spearman_zero: float | None = None  # mean over all groups, undefined = 0
    r_precision_zero: float | None = None


@dataclass(frozen=True)
class GroupDrop:
    reason: str
    groups: int


@dataclass(frozen=True)
class GroupView:
    """Which groups the averages are taken over, and why the others were left out."""

    groups: int  # sources with two or more hypotheses
    spearman_groups: int  # groups where every metric's Spearman is defined
    spearman_dropped: list[GroupDrop]
    r_groups: int  # groups where every metric's R-Precision is defined
    r_dropped: list[GroupDrop]
    relevance: str  # "binary labels" or "graded >= t"
    r_threshold: float | None  # the threshold on the graded scale, when relevance is graded


def _spearman_reason(x: FloatArray, h: FloatArray) -> str | None:
    """Why the Spearman of one metric in one group is undefined (None: defined)."""
    human = np.isfinite(h)
    if np.count_nonzero(human) < 2:
        return HUMAN_TOO_FEW
    if np.ptp(h[human]) == 0:
        return HUMAN_TIED
    keep = human & np.isfinite(x)
    if np.count_nonzero(keep) < 2:
        return METRIC_TOO_FEW
    if np.ptp(x[keep]) == 0 or np.ptp(h[keep]) == 0:
        return METRIC_TIED
    return None


def _r_precision(x: FloatArray, relevant: NDArray[np.int8]) -> tuple[float | None, str | None]:
    """R-Precision of one metric in one group: share of relevant items among its R best."""
    known = relevant >= 0
    if np.count_nonzero(known) < 2:
        return None, HUMAN_TOO_FEW
    truth = relevant[known] == 1
    r = int(np.count_nonzero(truth))
    if r == 0:
        return None, NO_RELEVANT
    if r == len(truth):
        return None, ALL_RELEVANT
    scored = known & np.isfinite(x)
    if np.count_nonzero(scored) < np.count_nonzero(known):
        return None, METRIC_MISSING
    top = np.argsort(-x[known], kind="stable")[:r]
    return float(np.mean(truth[top])), None


def _drops(reasons: list[str | None]) -> list[GroupDrop]:
    counts: dict[str, int] = {}
    for reason in reasons:
        if reason is not None:
            counts[reason] = counts.get(reason, 0) + 1
    return [GroupDrop(reason, count) for reason, count in counts.items()]


def _relevance(
    binary: NDArray[np.int8], graded: FloatArray, grouped: NDArray[np.int64], r_threshold: float | None
) -> tuple[NDArray[np.int8], str, float | None]:
    """R-Precision's relevant hypotheses: per pair 1, 0 or -1 (unknown), their description, the graded threshold.

    The binary labels when grouped pairs carry one; else (graded gold only) the hypotheses with
    graded value >= ``r_threshold``, by default the highest graded value among the grouped pairs.
    """
    if np.any(binary[grouped] >= 0) or not np.any(np.isfinite(graded[grouped])):
        return binary, "binary labels", None
    threshold = float(np.nanmax(graded[grouped])) if r_threshold is None else float(r_threshold)
    relevance_of = np.where(np.isfinite(graded), (graded >= threshold).astype(np.int8), -1).astype(np.int8)
    return relevance_of, f"graded >= {threshold:g}", threshold


def _group_statistics(
    members: list[NDArray[np.int64]], graded: FloatArray, oriented: FloatArray, relevance_of: NDArray[np.int8], m: int
) -> tuple[FloatArray, FloatArray, list[list[str | None]], list[list[str | None]]]:
    """Spearman and R-Precision of every metric (rows) in every group (columns), NaN where undefined.

    Returned with, for each cell, the reason it is undefined (None where it is defined).
    """
    rho = np.full((m, len(members)), np.nan)
    precision = np.full((m, len(members)), np.nan)
    rho_why: list[list[str | None]] = [[None] * len(members) for _ in range(m)]
    r_why: list[list[str | None]] = [[None] * len(members) for _ in range(m)]
    for column, items in enumerate(members):
        h = graded[items]
        for row in range(m):
            x = oriented[row][items]
            reason = _spearman_reason(x, h)
            if reason is None:
                keep = np.isfinite(x) & np.isfinite(h)
                rho[row, column] = float(stats.spearmanr(x[keep], h[keep]).statistic)
            rho_why[row][column] = reason
            value, r_why[row][column] = _r_precision(x, relevance_of[items])
            if value is not None:
                precision[row, column] = value
    return rho, precision, rho_why, r_why


def _common_groups(values: FloatArray, why: list[list[str | None]]) -> tuple[NDArray[np.bool_], list[str | None]]:
    """The groups where every metric is defined, and for each other group the first reason it is dropped.

    A metric defined in no group at all (e.g. not scored there) is left out of the common
    groups: it would empty them for every other metric. When no metric is defined anywhere,
    every group is dropped with the first reason any metric gives.
    """
    m, groups = values.shape
    rows = [row for row in range(m) if np.any(np.isfinite(values[row]))]
    if not rows:
        reasons = [next((why[row][column] for row in range(m) if why[row][column]), None) for column in range(groups)]
        return np.zeros(groups, dtype=bool), reasons
    common = np.all(np.isfinite(values[rows]), axis=0)
    reasons = [
        next((why[row][column] for row in rows if why[row][column]), None) if not common[column] else None
        for column in range(groups)
    ]
    return common, reasons


def source_groups(
    sources: list[str],
    binary: NDArray[np.int8],
    graded: FloatArray,
    metric_ids: list[int],
    oriented: FloatArray,
    r_threshold: float | None = None,
) -> tuple[int, list[GroupMetric], GroupView]:
    """Per-group Spearman and R-Precision over the groups of two or more hypotheses.

    Every metric is averaged over the same groups: those where every metric is defined (a
    group is dropped for all metrics when one metric is undefined there; the drops are counted
    by their first reason). Beside it, the mean over all groups with undefined values as 0.

    R-Precision's relevant hypotheses: the binary labels when grouped pairs carry one; else
    (graded gold only) the hypotheses with graded value >= ``r_threshold``, by default the
    highest graded value among the grouped pairs (paper 004: the exact paraphrases, degree 4
    of 0-4, are the relevant ones).
    """
    _, group_of, sizes = np.unique(np.asarray(sources, dtype=object), return_inverse=True, return_counts=True)
    multi = np.flatnonzero(sizes >= 2)
    members = [np.flatnonzero(group_of == group) for group in multi]
    grouped = np.concatenate(members) if members else np.zeros(0, dtype=np.int64)
    relevance_of, relevance, threshold = _relevance(binary, graded, grouped, r_threshold)
    rho, precision, rho_why, r_why = _group_statistics(members, graded, oriented, relevance_of, len(metric_ids))
    common_rho, rho_reasons = _common_groups(rho, rho_why)
    common_r, r_reasons = _common_groups(precision, r_why)

    def mean(values: FloatArray) -> float | None:
        return float(values.mean()) if len(values) else None

    out = [
        GroupMetric(
            metric=metric,
            groups=int(np.count_nonzero(np.isfinite(rho[row]))),
            spearman=mean(rho[row][common_rho]),
            r_groups=int(np.count_nonzero(np.isfinite(precision[row]))),
            r_precision=mean(precision[row][common_r]),
            spearman_zero=mean(np.nan_to_num(rho[row], nan=0.0)),
            r_precision_zero=mean(np.nan_to_num(precision[row], nan=0.0)),
        )
        for row, metric in enumerate(metric_ids)
    ]
    view = GroupView(
        groups=len(members),
        spearman_groups=int(np.count_nonzero(common_rho)),
        spearman_dropped=_drops(rho_reasons),
        r_groups=int(np.count_nonzero(common_r)),
        r_dropped=_drops(r_reasons),
        relevance=relevance,
        r_threshold=threshold,
    )
    return len(members), out, view
