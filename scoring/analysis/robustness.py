"""The robustness card of a metric: its scores on a probe set against the relations the probes
were built to have (``scoring.probes``).

Every figure is a ratio of per-source-group sums, so its bootstrap resamples source groups (a
source sentence's probes are not independent of each other): a resample is a vector of counts
over groups, drawn from a uniform multinomial, and the figure is ``counts @ numerator /
counts @ weight``.

* share below control, per kind (PAWS-style swap, number, date, negation): over every (probe,
  control) pair of one group, 1 when the probe scores below the control, ½ for a tie, 0 above;
  a metric blind to the change scores ½;
* multi-swap ranking (paper 004, section 5.1): per group of the original pair and its 1, 2, 3
  swap versions, the Spearman correlation between the scores and the expected order (fewer
  swaps closer; average ranks for ties; 0 where the metric gives every member the same score)
  and the R-Precision (the share of the R best-scored members that are the exact paraphrase,
  R their number, here 1; a tie at the cut counts by its expected share under a random order),
  averaged over groups;
* direction asymmetry: the mean over groups of |m(S, H) - m(H, S)|;
* length effect: the mean over groups of m(S, pad(H)) - m(S, H).

Scores come oriented: higher means closer in meaning (a distance is negated by the caller).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import rankdata

from scoring.analysis.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, Interval

ORIGINAL = "original"
MULTI_SWAP = "multi_swap"
CONTROL = "control"
REVERSED = "reversed"
PADDED = "padded"
AGAINST_CONTROL = ("paws_swap", "number", "date", "negation")
CONFIDENCE = 0.95


@dataclass(frozen=True)
class ProbeTable:
    """A probe set's pairs scored by one metric, one row per probe pair.

    ``groups``: the source group of each row (any integers); ``kinds``: its probe kind;
    ``swaps``: the number of swaps of multi-swap rows and 0 for the original pair (-1 elsewhere);
    ``scores``: the oriented score, NaN where the metric has none.
    """

    groups: NDArray[np.int64]
    kinds: tuple[str, ...]
    swaps: NDArray[np.int64]
    scores: NDArray[np.float64]


@dataclass(frozen=True)
class Figure:
    """One figure of the card: its value, its bootstrap interval and the groups it rests on."""

    value: float | None
    interval: Interval | None
    groups: int
    comparisons: int


@dataclass(frozen=True)
class KindShare:
    """The share of one kind's probes scored below their group's controls."""

    kind: str
    share: Figure


@dataclass(frozen=True)
class RobustnessCard:
    below_control: tuple[KindShare, ...]
    swap_spearman: Figure
    swap_r_precision: Figure
    asymmetry: Figure
    length_effect: Figure
    # The standard deviation of the metric's scores on the original pairs: the unit in which
    # the asymmetry and the length effect can be compared across metrics.
    scale: float | None
    resamples: int


@dataclass(frozen=True)
class GroupSums:
    """Per-group numerators and weights of one figure (groups without data left out)."""

    numerator: NDArray[np.float64]
    weight: NDArray[np.float64]
    comparisons: int


def _by_group(table: ProbeTable, mask: NDArray[np.bool_]) -> dict[int, NDArray[np.int64]]:
    """The scored rows of ``mask`` by group, groups in the order of their first row."""
    rows = np.flatnonzero(mask & ~np.isnan(table.scores))
    if len(rows) == 0:
        return {}
    order = np.argsort(table.groups[rows], kind="stable")  # rows stay ascending inside a group
    ordered = rows[order]
    keys = table.groups[ordered]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    chunks = sorted(np.split(ordered, starts[1:]), key=lambda chunk: int(chunk[0]))
    return {int(table.groups[chunk[0]]): chunk.astype(np.int64) for chunk in chunks}


def _kind_mask(table: ProbeTable, kind: str) -> NDArray[np.bool_]:
    mask: NDArray[np.bool_] = np.asarray(table.kinds) == kind
    return mask


def below_control_sums(table: ProbeTable, kind: str) -> GroupSums:
    """Per group: wins of the controls over the probes of ``kind`` (ties ½) and the comparisons made.

    Groups come in the order of their first probe; every (probe, control) pair of a group is
    formed at once (a join on the group through the sorted controls), not in a loop over groups.
    """
    valid = ~np.isnan(table.scores)
    probe_rows = np.flatnonzero(_kind_mask(table, kind) & valid)
    control_rows = np.flatnonzero(_kind_mask(table, CONTROL) & valid)
    control_rows = control_rows[np.argsort(table.groups[control_rows], kind="stable")]
    control_groups = table.groups[control_rows]
    probe_groups = table.groups[probe_rows]
    first = np.searchsorted(control_groups, probe_groups, side="left")
    count = np.searchsorted(control_groups, probe_groups, side="right") - first
    keep = count > 0
    probe_rows, probe_groups, first, count = probe_rows[keep], probe_groups[keep], first[keep], count[keep]
    if len(probe_rows) == 0:
        return GroupSums(np.zeros(0), np.zeros(0), 0)
    offsets = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    probe_scores = table.scores[np.repeat(probe_rows, count)]
    control_scores = table.scores[control_rows[np.repeat(first, count) + offsets]]
    wins = (probe_scores < control_scores) + 0.5 * (probe_scores == control_scores)
    groups, first_probe = np.unique(probe_groups, return_index=True)
    place = np.empty(len(groups), dtype=np.int64)
    place[np.argsort(first_probe, kind="stable")] = np.arange(len(groups))
    position = place[np.searchsorted(groups, np.repeat(probe_groups, count))]
    numerator = np.bincount(position, weights=wins, minlength=len(groups)).astype(np.float64)
    weight = np.bincount(position, minlength=len(groups)).astype(np.float64)
    return GroupSums(numerator, weight, int(weight.sum()))


def _ranking_groups(table: ProbeTable) -> list[tuple[NDArray[np.int64], NDArray[np.float64]]]:
    mask = _kind_mask(table, MULTI_SWAP) | _kind_mask(table, ORIGINAL)
    result = []
    multi = _kind_mask(table, MULTI_SWAP)
    for rows in _by_group(table, mask).values():
        # A group ranks only when it has its original pair and at least one swap version.
        if len(rows) < 2 or not multi[rows].any() or multi[rows].all():
            continue
        result.append((table.swaps[rows], table.scores[rows]))
    return result


def group_spearman(swaps: NDArray[np.int64], scores: NDArray[np.float64]) -> float:
    """Spearman correlation of ``scores`` with the expected order (fewer swaps higher); 0 for constant scores."""
    expected = rankdata(-swaps)
    observed = rankdata(scores)
    if np.all(observed == observed[0]) or np.all(expected == expected[0]):
        return 0.0
    return float(np.corrcoef(expected, observed)[0, 1])


def group_r_precision(swaps: NDArray[np.int64], scores: NDArray[np.float64]) -> float:
    """The share of the R best-scored members that have the fewest swaps (R: their number).

    Members tied at the cut count by their expected share under a random order of the tie.
    """
    relevant = swaps == swaps.min()
    r = int(np.count_nonzero(relevant))
    cut = np.sort(scores)[::-1][r - 1]
    above = scores > cut
    at_cut = scores == cut
    places_left = r - int(np.count_nonzero(above))
    found = np.count_nonzero(above & relevant) + places_left * np.count_nonzero(at_cut & relevant) / np.count_nonzero(
        at_cut
    )
    return float(found / r)


def average_ranks(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """The 1-based average ranks of each row (ties share their mean rank), as ``rankdata`` per row."""
    below = (rows[:, None, :] < rows[:, :, None]).sum(axis=2)
    equal = (rows[:, None, :] == rows[:, :, None]).sum(axis=2)
    ranks: NDArray[np.float64] = below + (equal + 1) / 2
    return ranks


def rows_spearman(swaps: NDArray[np.float64], scores: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`group_spearman` of every row of equally sized groups at once."""
    expected = average_ranks(-swaps)
    observed = average_ranks(scores)
    e = expected - expected.mean(axis=1, keepdims=True)
    o = observed - observed.mean(axis=1, keepdims=True)
    norm = np.sqrt((e * e).sum(axis=1) * (o * o).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, (e * o).sum(axis=1) / np.where(norm > 0, norm, 1.0), 0.0)


def rows_r_precision(swaps: NDArray[np.float64], scores: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`group_r_precision` of every row of equally sized groups at once."""
    relevant = swaps == swaps.min(axis=1, keepdims=True)
    r = relevant.sum(axis=1)
    cut = -np.sort(-scores, axis=1)[np.arange(len(scores)), r - 1][:, None]
    above = scores > cut
    at_cut = scores == cut
    places_left = r - above.sum(axis=1)
    found = (above & relevant).sum(axis=1) + places_left * (at_cut & relevant).sum(axis=1) / at_cut.sum(axis=1)
    return np.asarray(found / r, dtype=np.float64)


def ranking_sums(table: ProbeTable) -> tuple[GroupSums, GroupSums]:
    """Per-group Spearman and R-Precision of the multi-swap groups (weight 1 each).

    Groups of one size are computed together (:func:`rows_spearman`, :func:`rows_r_precision`):
    a loop of :func:`group_spearman` over thousands of source pairs took seconds.
    """
    groups = _ranking_groups(table)
    spearman = np.empty(len(groups))
    r_precision = np.empty(len(groups))
    by_size: dict[int, list[int]] = {}
    for index, (group_swaps, _) in enumerate(groups):
        by_size.setdefault(len(group_swaps), []).append(index)
    for members in by_size.values():
        swaps = np.array([groups[i][0] for i in members], dtype=np.float64)
        scores = np.array([groups[i][1] for i in members], dtype=np.float64)
        spearman[members] = rows_spearman(swaps, scores)
        r_precision[members] = rows_r_precision(swaps, scores)
    ones = np.ones(len(groups))
    return GroupSums(spearman, ones, len(groups)), GroupSums(r_precision, ones, len(groups))


def _paired(table: ProbeTable, kind: str) -> list[tuple[float, float]]:
    originals = _by_group(table, _kind_mask(table, ORIGINAL))
    variants = _by_group(table, _kind_mask(table, kind))
    return [
        (float(table.scores[originals[group][0]]), float(table.scores[rows[0]]))
        for group, rows in variants.items()
        if group in originals
    ]


def asymmetry_sums(table: ProbeTable) -> GroupSums:
    """Per group |m(S, H) - m(H, S)|."""
    pairs = _paired(table, REVERSED)
    return GroupSums(np.asarray([abs(f - r) for f, r in pairs]), np.ones(len(pairs)), len(pairs))


def length_sums(table: ProbeTable) -> GroupSums:
    """Per group m(S, pad(H)) - m(S, H)."""
    pairs = _paired(table, PADDED)
    return GroupSums(np.asarray([p - f for f, p in pairs]), np.ones(len(pairs)), len(pairs))


def _figure(sums: GroupSums, counts: NDArray[np.float64] | None) -> Figure:
    groups = len(sums.weight)
    if groups == 0 or sums.weight.sum() == 0:
        return Figure(None, None, 0, 0)
    value = float(sums.numerator.sum() / sums.weight.sum())
    interval = None
    if counts is not None and groups > 1:
        draws = counts[:, :groups]
        weights = draws @ sums.weight
        estimates = (draws @ sums.numerator)[weights > 0] / weights[weights > 0]
        tail = (1 - CONFIDENCE) / 2 * 100
        interval = Interval(float(np.percentile(estimates, tail)), float(np.percentile(estimates, 100 - tail)))
    return Figure(value, interval, groups, sums.comparisons)


def group_counts(groups: int, resamples: int, seed: int) -> NDArray[np.float64]:
    """``resamples`` x ``groups`` draw counts: each row a resample of the groups with replacement."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(groups, np.full(groups, 1.0 / groups), size=resamples).astype(np.float64)


def bootstrap_figure(
    sums: GroupSums,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    draws: dict[int, NDArray[np.float64]] | None = None,
) -> Figure:
    """A figure with its percentile interval over resampled source groups (none with resamples=0).

    ``draws``: the counts already drawn, by number of groups, reused and filled in (the same
    counts :func:`group_counts` would draw again, so many cards cost one draw per group count).
    """
    groups = len(sums.weight)
    counts = None
    if resamples and groups > 1:
        if draws is None:
            counts = group_counts(groups, resamples, seed)
        else:
            counts = draws.get(groups)
            if counts is None:
                counts = draws[groups] = group_counts(groups, resamples, seed)
    return _figure(sums, counts)


def robustness_card(
    table: ProbeTable,
    kinds: Sequence[str] = AGAINST_CONTROL,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    draws: dict[int, NDArray[np.float64]] | None = None,
) -> RobustnessCard:
    """Every figure of the card for one metric's scores on one probe set (``draws``: see
    :func:`bootstrap_figure`; pass one dict for every card of a probe set)."""
    spearman, r_precision = ranking_sums(table)
    originals = table.scores[_kind_mask(table, ORIGINAL) & ~np.isnan(table.scores)]
    scale = float(np.std(originals, ddof=1)) if len(originals) > 1 else None
    return RobustnessCard(
        below_control=tuple(
            KindShare(kind, bootstrap_figure(below_control_sums(table, kind), resamples, seed, draws)) for kind in kinds
        ),
        swap_spearman=bootstrap_figure(spearman, resamples, seed, draws),
        swap_r_precision=bootstrap_figure(r_precision, resamples, seed, draws),
        asymmetry=bootstrap_figure(asymmetry_sums(table), resamples, seed, draws),
        length_effect=bootstrap_figure(length_sums(table), resamples, seed, draws),
        scale=scale,
        resamples=resamples,
    )
