"""System-level view and groups of hypotheses sharing a source.

Systems (WMT's system-level meta-evaluation): when pairs carry the system that produced their
hypothesis and there are two or more systems, each system's human paraphrase rate and mean
ordinal score beside each metric's mean; the system-level Pearson and Kendall between the
metric's means and the human means; and Soft Pairwise Accuracy (Thompson et al. 2024): for
every two systems, p-values that the first beats the second from the human scores and from the
metric's scores (the same seeded permutations), SPA = mean of 1 - |p_human - p_metric|, with a
percentile bootstrap interval: items are resampled with replacement within each system (the
same resample for the human and every metric, seeded) and every p-value recomputed on it.

Groups (several hypotheses for one source, paper 004): per group, the Spearman correlation of
the metric with the human scale and the R-Precision (the share of human paraphrases among the
metric's R best-scored hypotheses, R = the group's paraphrases), averaged over groups.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from scoring.analysis.paired import sign_blocks

FloatArray = NDArray[np.float64]
MIN_SYSTEMS = 2
# SPA's interval nests permutations in bootstrap resamples: fewer of each than elsewhere keeps
# it to seconds (systems x metrics x SPA_BOOTSTRAP x SPA_PERMUTATIONS means per system pair).
SPA_BOOTSTRAP = 200
SPA_PERMUTATIONS = 200


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
    spa_interval: list[float] | None = None  # percentile bootstrap [low, high]


@dataclass(frozen=True)
class SystemView:
    systems: list[SystemRow]
    metrics: list[SystemMetric]
    system_pairs: int
    paired_by_source: bool  # p-values from hypotheses of the same sources
    spa_resamples: int = 0  # bootstrap resamples of SPA's interval (SPA_PERMUTATIONS permutations each)


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
    """One-sided permutation p-value that mean(a) > mean(b): paired sign flips when ``a`` and
    ``b`` are aligned per source, else label shuffles of the two samples."""
    observed = a.mean() - b.mean()
    joined = np.concatenate((a, b))
    rng = np.random.default_rng([seed, len(a), len(b), salt])
    null = np.empty(resamples)
    for first in range(0, resamples, 256):
        size = min(256, resamples - first)
        shuffled = rng.permuted(np.broadcast_to(joined, (size, len(joined))), axis=1)
        null[first : first + size] = shuffled[:, : len(a)].mean(axis=1) - shuffled[:, len(a) :].mean(axis=1)
    return float((np.count_nonzero(null >= observed - 1e-12) + 1) / (resamples + 1))


def _p_greater_paired(differences: FloatArray, resamples: int, seed: int) -> float:
    observed = differences.mean()
    null = np.concatenate(
        [signs @ differences / len(differences) for signs in sign_blocks(len(differences), resamples, seed)]
    )
    exact = len(null) == 2 ** len(differences)
    adjustment = 0 if exact else 1
    return float((np.count_nonzero(null >= observed - 1e-12) + adjustment) / (len(null) + adjustment))


def system_p_values(
    values: FloatArray, systems: list[str], names: list[str], sources: list[str] | None, resamples: int, seed: int
) -> tuple[list[float], bool]:
    """p-value that system i beats system j, for every i < j of ``names`` (NaN values left out)."""
    system_array = np.asarray(systems, dtype=object)
    source_array = np.asarray(sources, dtype=object) if sources is not None else None
    out: list[float] = []
    paired_all = True
    for salt, (first, second) in enumerate(combinations(names, 2)):
        a_mask = (system_array == first) & np.isfinite(values)
        b_mask = (system_array == second) & np.isfinite(values)
        if source_array is not None:
            shared = sorted(set(source_array[a_mask]) & set(source_array[b_mask]))
            if len(shared) >= 2:
                a = _per_source(values[a_mask], source_array[a_mask], shared)
                b = _per_source(values[b_mask], source_array[b_mask], shared)
                out.append(_p_greater_paired(a - b, resamples, seed + salt))
                continue
        paired_all = False
        out.append(_p_greater(values[a_mask], values[b_mask], resamples, seed, salt))
    return out, paired_all


def _per_source(values: FloatArray, sources: NDArray, shared: list[str]) -> FloatArray:
    index = {source: position for position, source in enumerate(shared)}
    sums = np.zeros(len(shared))
    counts = np.zeros(len(shared))
    for value, source in zip(values.tolist(), sources.tolist(), strict=True):
        if source in index:
            sums[index[source]] += value
            counts[index[source]] += 1
    return sums / counts


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
) -> SystemView | None:
    """The system-level view; None when fewer than two systems are named.

    ``spa_resamples``: bootstrap resamples of SPA's interval (0: none)."""
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
    human_p, paired = system_p_values(graded, systems, names, sources, resamples, seed)
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
        spa = float(np.mean(1 - np.abs(np.array(human_p) - np.array(metric_p))))
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
        intervals = _spa_intervals(systems, sources, graded, oriented[defined], names, spa_resamples, seed, confidence)
        for row, interval in zip(defined, intervals, strict=True):
            results[row] = replace(results[row], spa_interval=interval)
    return SystemView(rows, results, len(human_p), paired, spa_resamples if defined else 0)


def _spa_intervals(
    systems: list[str],
    sources: list[str] | None,
    graded: FloatArray,
    oriented: FloatArray,
    names: list[str],
    resamples: int,
    seed: int,
    confidence: float,
) -> list[list[float] | None]:
    """Percentile intervals of SPA, one per row of ``oriented``: items resampled within systems."""
    system_array = np.asarray(systems, dtype=object)
    source_array = np.asarray(sources, dtype=object) if sources is not None else None
    members = [np.flatnonzero(system_array == name) for name in names]
    rng = np.random.default_rng([seed, 53])
    spa = np.full((len(oriented), resamples), np.nan)
    for resample in range(resamples):
        drawn = np.concatenate([rng.choice(items, size=len(items), replace=True) for items in members])
        drawn_systems = system_array[drawn].tolist()
        drawn_sources = None if source_array is None else source_array[drawn].tolist()
        # The same permutations (seed) for the human and every metric, as in the point estimate.
        inner_seed = seed + 1 + resample
        human_p, _ = system_p_values(graded[drawn], drawn_systems, names, drawn_sources, SPA_PERMUTATIONS, inner_seed)
        for row in range(len(oriented)):
            metric_p, _ = system_p_values(
                oriented[row][drawn], drawn_systems, names, drawn_sources, SPA_PERMUTATIONS, inner_seed
            )
            spa[row, resample] = np.mean(1 - np.abs(np.array(human_p) - np.array(metric_p)))
    tail = (1 - confidence) / 2 * 100
    out: list[list[float] | None] = []
    for values in spa:
        finite = values[np.isfinite(values)]
        out.append(None if len(finite) == 0 else [float(v) for v in np.percentile(finite, [tail, 100 - tail])])
    return out


@dataclass(frozen=True)
class GroupMetric:
    metric: int
    groups: int  # groups with a defined Spearman
    spearman: float | None
    r_groups: int  # groups with at least one paraphrase and one non-paraphrase
    r_precision: float | None


def source_groups(
    sources: list[str], binary: NDArray[np.int8], graded: FloatArray, metric_ids: list[int], oriented: FloatArray
) -> tuple[int, list[GroupMetric]]:
    """Per-group Spearman and R-Precision averaged over the groups of two or more hypotheses."""
    _, group_of, sizes = np.unique(np.asarray(sources, dtype=object), return_inverse=True, return_counts=True)
    multi = np.flatnonzero(sizes >= 2)
    members = [np.flatnonzero(group_of == group) for group in multi]
    out = []
    for row, metric in enumerate(metric_ids):
        rhos: list[float] = []
        precisions: list[float] = []
        for items in members:
            x, h = oriented[row][items], graded[items]
            keep = np.isfinite(x) & np.isfinite(h)
            if np.count_nonzero(keep) >= 2 and np.ptp(x[keep]) > 0 and np.ptp(h[keep]) > 0:
                rhos.append(float(stats.spearmanr(x[keep], h[keep]).statistic))
            labelled = np.isfinite(x) & (binary[items] >= 0)
            truth = binary[items][labelled] == 1
            r = int(np.count_nonzero(truth))
            if 0 < r < len(truth):
                top = np.argsort(-x[labelled], kind="stable")[:r]
                precisions.append(float(np.mean(truth[top])))
        out.append(
            GroupMetric(
                metric,
                len(rhos),
                float(np.mean(rhos)) if rhos else None,
                len(precisions),
                float(np.mean(precisions)) if precisions else None,
            )
        )
    return len(members), out
