"""The stopping rule: is the paired ROC AUC (or Pearson r) difference of two metrics settled yet?

A campaign's dashboard is read while the judgements arrive, as often as anyone likes. A
fixed-sample test (DeLong's p < 0.05) read after every judgement is a test repeated thousands
of times: with two metrics of equal AUC it declares a difference in a large share of campaigns
(the simulation in ``benchmarks/stopping_rule.py`` measures it). The rule here is an
**always-valid confidence sequence**: a sequence of intervals that holds the true difference
at *every* moment at once with probability 1 - alpha, so reading it after every judgement and
stopping the first time it leaves 0 keeps the false-positive rate at alpha.

Which method, and why
---------------------
The asymptotic confidence sequence of Waudby-Smith, Arnold, Wu, Howard & Ramdas (2021,
"Time-uniform central limit theory and asymptotic confidence sequences", Theorem 2.2), a
Robbins normal-mixture boundary around a mean of n observations with standard deviation
sigma:

    mean +- sigma * sqrt( 2 (n rho^2 + 1) / (n^2 rho^2) * log( sqrt(n rho^2 + 1) / alpha ) ).

The AUC difference is a two-sample U-statistic, not a plain mean, but its Hoeffding projection
is one: a sum over pairs of DeLong's placement values, and the remainder is of smaller order,
so the same strong invariance principle the theorem rests on carries over. With DeLong's
standard error se = sigma / sqrt(n), the boundary is the fixed-sample interval with 1.96
replaced by a multiplier that grows slowly with n (:func:`multiplier`):

    difference +- se * sqrt( (n rho^2 + 1) / (n rho^2) * 2 log( sqrt(n rho^2 + 1) / alpha ) ).

``rho`` makes the sequence tightest at the campaign's planned number of labelled pairs
(:func:`rho_squared`, the paper's choice); any rho is valid, so the plan can be wrong without
costing validity, only width. Its price: at the planned size it is wider than the fixed-sample
interval (multiplier about 3.0 instead of 1.96 at alpha = 0.05), so reaching the power a fixed
design has at n pairs takes about 1.6 n pairs (:mod:`scoring.analysis.sequential_design`
computes each rule's own power; the planner shows it).

The second method, chosen before the first judgement, is a group-sequential alpha-spending plan
(Lan-DeMets O'Brien-Fleming spending, :mod:`scoring.analysis.sequential_design`): K looks at
labelled-pair counts fixed in advance, |difference| / se against each look's boundary there
(:func:`group_sequential_mask`), nothing decided between looks. Pick the confidence sequence
when the campaign's course is unknown (volunteers arrive when they arrive, pairs may be added,
the information is unknown until measured, a large difference should stop it at once, an
interval valid at any moment is wanted); pick the group-sequential plan when the budget is
fixed and tight: it needs about 3 % more pairs than a fixed design for the same power, at the
cost of deciding only at its looks.

The sequence of observations
----------------------------
A pair enters the sequence when its label can no longer change: when it has the campaign's
judges per pair (its label is the majority of those first judgements, as
:func:`scoring.analysis.labels.volunteer_labels` reads it; a tie or Don't know gives no label
and the pair does not enter). The pairs' order is the order in which they were completed, which
the allocation (a shuffled order, not the labels) decides. Between two completions the
sequence does not move, so reading the dashboard after every judgement is reading it after
every completion. The rule cannot settle before ``min_per_class`` paraphrases and
non-paraphrases are in (the theorem is asymptotic; the simulations check the small samples).

The Pearson r difference against the graded human scale (the mean of the pair's first judges'
answers, 1-4) is a smooth function of means, so the same sequence applies with the
delta-method (influence-function) standard error (:func:`pearson_paths`); the rule waits for
twice ``min_per_class`` pairs.

Pure functions over arrays: :func:`delong_paths` gives the AUC difference and its DeLong
standard error after every prefix of many sequences at once (the simulations run a thousand
campaigns as one array), :func:`pearson_paths` the same for Pearson r, :func:`verdict` reads one
campaign.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from scoring.analysis.labels import volunteer_labels
from scoring.analysis.sequential_design import DEFAULT_LOOKS as DEFAULT_LOOKS
from scoring.analysis.sequential_design import MAX_LOOKS, group_sequential_plan
from scoring.analysis.sequential_design import GroupSequentialPlan as GroupSequentialPlan
from scoring.analysis.sequential_design import multiplier as multiplier
from scoring.analysis.sequential_design import rho_squared as rho_squared

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

DEFAULT_ALPHA = 0.05
# Paraphrases and non-paraphrases both needed before the rule may settle.
MIN_PER_CLASS = 20
STATISTICS = ("auc", "pearson")
STATISTIC_SYMBOLS = {"auc": "\u0394AUC", "pearson": "\u0394r"}
CONFIDENCE_SEQUENCE = "confidence_sequence"
GROUP_SEQUENTIAL = "group_sequential"
METHODS = (CONFIDENCE_SEQUENCE, GROUP_SEQUENTIAL)


@dataclass(frozen=True)
class Question:
    """The campaign's question, fixed before its first judgement: is metric A's ROC AUC against
    the volunteers' labels different from metric B's? ``planned_pairs``: the labelled pairs the
    campaign plans (tunes where the sequence is tightest; it never affects validity)."""

    metric_a: int
    metric_b: int
    alpha: float = DEFAULT_ALPHA
    planned_pairs: int = 1000
    min_per_class: int = MIN_PER_CLASS
    statistic: str = "auc"
    method: str = CONFIDENCE_SEQUENCE
    looks: int = DEFAULT_LOOKS  # the group-sequential plan's (ignored by the confidence sequence)

    def __post_init__(self) -> None:
        if self.statistic not in STATISTICS:
            raise ValueError(f"statistic: one of {', '.join(STATISTICS)}, got {self.statistic!r}")
        if self.method not in METHODS:
            raise ValueError(f"method: one of {', '.join(METHODS)}, got {self.method!r}")
        if not 1 <= self.looks <= MAX_LOOKS:
            raise ValueError(f"looks: from 1 to {MAX_LOOKS}, got {self.looks}")
        if self.method == GROUP_SEQUENTIAL and self.planned_pairs < self.looks:
            raise ValueError(f"planned_pairs ({self.planned_pairs}) must be at least the looks ({self.looks})")
        if not 0 < self.alpha < 0.5:
            raise ValueError(f"alpha must be between 0 and 0.5, got {self.alpha}")
        if self.planned_pairs < 1:
            raise ValueError(f"planned_pairs must be at least 1, got {self.planned_pairs}")
        if self.metric_a == self.metric_b:
            raise ValueError("metric_a and metric_b must be two different metrics")
        if self.min_per_class < 2:
            raise ValueError(f"min_per_class must be at least 2, got {self.min_per_class}")

    def group_sequential(self) -> GroupSequentialPlan:
        """The group-sequential plan of this question (its looks and boundaries, its maximum size
        the planned pairs times the inflation that keeps the fixed design's power)."""
        return group_sequential_plan(self.planned_pairs, self.looks, self.alpha)


@dataclass(frozen=True)
class Paths:
    """After each prefix (columns) of each sequence (rows): the AUC difference A - B, DeLong's
    standard error, and the paraphrases and non-paraphrases in (NaN while a class is empty)."""

    difference: FloatArray
    se: FloatArray
    positives: IntArray
    negatives: IntArray
    pairs: IntArray | None = None  # the pairs in, when they are not paraphrases + non-paraphrases

    @property
    def n(self) -> IntArray:
        return self.positives + self.negatives if self.pairs is None else self.pairs


def _heaviside(d: FloatArray) -> FloatArray:
    """1 above 0, 1/2 at 0 (a tie counts half, as in the Mann-Whitney AUC), 0 below."""
    step: FloatArray = (d > 0) + 0.5 * (d == 0)
    return step


def delong_paths(a: FloatArray, b: FloatArray, positive: BoolArray) -> Paths:
    """ROC AUC(A) - AUC(B) and DeLong's standard error after every prefix, for every row.

    ``a``, ``b`` (sequences x pairs): oriented scores (higher: closer) in arrival order;
    ``positive``: the labels. Incremental: each pair keeps D, the difference between A and B of
    how many pairs of the other class it beats (ties 1/2), i.e. its DeLong placement value times
    the other class's size. An arriving non-paraphrase changes the D of every paraphrase already in
    by h(a_i - a_new) - h(b_i - b_new) (and the other way round), and its own D is the sum of those
    changes; running sums of D and D^2 per class give the mean and the variance. O(n^2) per row,
    every row at once; the last column equals :func:`scoring.analysis.paired.delong_test` (tested).
    """
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    pos = np.atleast_2d(np.asarray(positive, dtype=bool))
    if a.shape != b.shape or a.shape != pos.shape:
        raise ValueError(f"a, b and positive must have one shape, got {a.shape}, {b.shape}, {pos.shape}")
    rows, n = a.shape
    d = np.zeros((rows, n))
    sums = np.zeros((2, rows))  # [non-paraphrases, paraphrases]: sum of D
    squares = np.zeros((2, rows))
    counts = np.zeros((2, rows), dtype=np.int64)
    difference = np.full((rows, n), np.nan)
    se = np.full((rows, n), np.nan)
    positives = np.zeros((rows, n), dtype=np.int64)
    negatives = np.zeros((rows, n), dtype=np.int64)
    everyone = np.arange(rows)
    for t in range(n):
        new_pos = pos[:, t]
        if t:
            g = _heaviside(a[:, :t] - a[:, t : t + 1]) - _heaviside(b[:, :t] - b[:, t : t + 1])
            # A new non-paraphrase: the paraphrases in gain g; a new paraphrase: the non-paraphrases in lose g.
            opposite = pos[:, :t] != new_pos[:, None]
            delta = np.where(opposite, np.where(new_pos[:, None], -g, g), 0.0)
            old = d[:, :t]
            other = (~new_pos).astype(np.int64)  # the class whose D changes
            sums[other, everyone] += delta.sum(axis=1)
            squares[other, everyone] += (2 * old * delta + delta * delta).sum(axis=1)
            d[:, :t] = old + delta
            own = delta.sum(axis=1)
        else:
            own = np.zeros(rows)
        mine = new_pos.astype(np.int64)
        d[:, t] = own
        sums[mine, everyone] += own
        squares[mine, everyone] += own * own
        counts[mine, everyone] += 1
        q, p = counts[0].astype(np.float64), counts[1].astype(np.float64)
        positives[:, t], negatives[:, t] = counts[1], counts[0]
        both = (p > 0) & (q > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            difference[:, t] = np.where(both, sums[1] / (p * q), np.nan)
            # Placement values: D / Q for a paraphrase, D / P for a non-paraphrase (ddof = 1).
            var10 = (squares[1] / q**2 - p * (sums[1] / (p * q)) ** 2) / (p - 1)
            var01 = (squares[0] / p**2 - q * (sums[0] / (p * q)) ** 2) / (q - 1)
            variance = np.where(p > 1, var10 / p, 0.0) + np.where(q > 1, var01 / q, 0.0)
            se[:, t] = np.where(both, np.sqrt(np.maximum(variance, 0.0)), np.nan)
    return Paths(difference, se, positives, negatives)


def pearson_paths(a: FloatArray, b: FloatArray, human: FloatArray) -> Paths:
    """Pearson r(A, human) - r(B, human) and its standard error after every prefix, every row.

    The standard error is the influence-function (delta-method) one: with x, h standardised on the
    prefix, each pair's influence on r is x h - r (x^2 + h^2) / 2, and the difference's standard
    error is that of the mean of the pairs' differences of influence (sum of squares /
    (n (n - 1))). Recomputed at every prefix: O(n^2) per row, every row at once. ``positives`` and
    ``negatives`` both hold the number of pairs in (a correlation has no classes: the caller asks
    for twice ``min_per_class`` pairs).
    """
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    h = np.atleast_2d(np.asarray(human, dtype=np.float64))
    if a.shape != b.shape or a.shape != h.shape:
        raise ValueError(f"a, b and human must have one shape, got {a.shape}, {b.shape}, {h.shape}")
    rows, n = a.shape
    difference = np.full((rows, n), np.nan)
    se = np.full((rows, n), np.nan)

    def standardised(x: FloatArray) -> FloatArray:
        spread = x.std(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(spread > 0, (x - x.mean(axis=1, keepdims=True)) / spread, np.nan)

    for t in range(2, n):
        xa, xb, hh = standardised(a[:, : t + 1]), standardised(b[:, : t + 1]), standardised(h[:, : t + 1])
        ra, rb = (xa * hh).mean(axis=1), (xb * hh).mean(axis=1)
        influence = xa * hh - ra[:, None] * (xa * xa + hh * hh) / 2 - (xb * hh - rb[:, None] * (xb * xb + hh * hh) / 2)
        difference[:, t] = ra - rb
        se[:, t] = np.sqrt((influence * influence).sum(axis=1) / ((t + 1) * t))
    count = np.broadcast_to(np.arange(1, n + 1, dtype=np.int64), (rows, n)).copy()
    return Paths(difference, se, count, count.copy(), pairs=count)


@dataclass(frozen=True)
class Crossings:
    """Per sequence: the first prefix (0-based position) at which each rule declared a
    difference, -1 when it never did."""

    always_valid: IntArray
    naive: IntArray


def settled_mask(paths: Paths, alpha: float, planned: int, min_per_class: int = MIN_PER_CLASS) -> BoolArray:
    """Where the confidence sequence excludes 0 (a spread of 0 never settles anything)."""
    half = paths.se * multiplier(paths.n, alpha, planned)
    ready = (paths.positives >= min_per_class) & (paths.negatives >= min_per_class) & (paths.se > 0)
    with np.errstate(invalid="ignore"):
        return ready & (np.abs(paths.difference) > half)


def naive_mask(paths: Paths, alpha: float, min_per_class: int = MIN_PER_CLASS) -> BoolArray:
    """Where the fixed-sample DeLong test would say p < alpha (the rule that must not be used
    while watching: here only as the contrast of the simulations)."""
    z = float(stats.norm.ppf(1 - alpha / 2))
    ready = (paths.positives >= min_per_class) & (paths.negatives >= min_per_class) & (paths.se > 0)
    with np.errstate(invalid="ignore"):
        return ready & (np.abs(paths.difference) > z * paths.se)


def group_sequential_mask(paths: Paths, plan: GroupSequentialPlan, min_per_class: int = MIN_PER_CLASS) -> BoolArray:
    """Where the group-sequential plan rejects: only at its looks (the first prefix with as many
    pairs in as the look's count), when |difference| / se reaches the look's boundary. A look
    before both classes have ``min_per_class`` is skipped (its alpha is not spent elsewhere:
    conservative)."""
    ready = (paths.positives >= min_per_class) & (paths.negatives >= min_per_class) & (paths.se > 0)
    n = paths.n
    mask = np.zeros(paths.difference.shape, dtype=bool)
    for count, bound in zip(plan.looks, plan.boundaries, strict=True):
        at = (n >= count) & ~np.concatenate([np.zeros((n.shape[0], 1), dtype=bool), n[:, :-1] >= count], axis=1)
        with np.errstate(invalid="ignore"):
            mask |= at & ready & (np.abs(paths.difference) >= bound * paths.se)
    return mask


def first_true(mask: BoolArray) -> IntArray:
    """The first column where each row is True, -1 when none."""
    any_true = mask.any(axis=1)
    return np.where(any_true, mask.argmax(axis=1), -1).astype(np.int64)


def crossings(paths: Paths, alpha: float, planned: int, min_per_class: int = MIN_PER_CLASS) -> Crossings:
    return Crossings(
        always_valid=first_true(settled_mask(paths, alpha, planned, min_per_class)),
        naive=first_true(naive_mask(paths, alpha, min_per_class)),
    )


# --- one campaign ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class State:
    """The confidence sequence at one moment: after ``pairs`` labelled pairs (``judgements``
    counted judgements), A - B and its always-valid interval (None before both classes are in)."""

    pairs: int
    judgements: int
    difference: float | None
    low: float | None
    high: float | None
    answered_at: float | None = None  # seconds since the epoch (the completing judgement)


@dataclass(frozen=True)
class Verdict:
    """The question's answer now. ``settled``: the moment the sequence first left 0 (the rule
    stops there, whatever came after), else None; ``current``: the sequence now."""

    question: Question
    current: State
    settled: State | None
    better: int | None  # the metric id that agrees better, once settled
    reason: str  # why not settled yet, or what settled it
    ready: bool = True  # enough of each class for the rule to settle (else ``reason`` says what lacks)

    @property
    def is_settled(self) -> bool:
        return self.settled is not None


def completion_order(
    pair_index: IntArray, answered_at: FloatArray, judges_per_pair: int
) -> tuple[IntArray, FloatArray, IntArray, IntArray]:
    """Which pairs are complete, in the order they were completed.

    From counted judgements (pair position, seconds since the epoch): the pairs with at least
    ``judges_per_pair`` judgements, ordered by the time of their ``judges_per_pair``-th one;
    returned with that time, the number of judgements counted at that moment, and the rows of
    the judgements that make each label (the first ``judges_per_pair`` of the pair)."""
    if judges_per_pair < 1:
        raise ValueError(f"judges_per_pair must be at least 1, got {judges_per_pair}")
    index = np.asarray(pair_index, dtype=np.int64)
    times = np.asarray(answered_at, dtype=np.float64)
    rows = np.lexsort((np.arange(len(index)), times, index))  # by pair, then time
    ordered_pairs = index[rows]
    starts = np.flatnonzero(np.concatenate(([True], ordered_pairs[1:] != ordered_pairs[:-1]))) if len(rows) else rows
    position = np.arange(len(rows)) - np.repeat(starts, np.diff(np.append(starts, len(rows))))
    first_k = rows[position < judges_per_pair]
    completing = rows[position == judges_per_pair - 1]
    when = times[completing]
    order = np.lexsort((completing, when))
    completing, when = completing[order], when[order]
    everyone = np.sort(times)
    judged = np.searchsorted(everyone, when, side="right").astype(np.int64)
    return index[completing], when, judged, first_k


def verdict(
    question: Question,
    metric_ids: list[int],
    scores: FloatArray,
    pair_index: IntArray,
    codes: IntArray,
    answered_at: FloatArray,
    judges_per_pair: int,
) -> Verdict:
    """Read the campaign's question from its counted judgements and its oriented scores
    (metrics x pairs, higher: closer). Pairs a metric could not score never enter."""
    for metric in (question.metric_a, question.metric_b):
        if metric not in metric_ids:
            raise ValueError(f"metric {metric} of the question is not among the campaign's metrics")
    a_all = scores[metric_ids.index(question.metric_a)]
    b_all = scores[metric_ids.index(question.metric_b)]
    pair_index = np.asarray(pair_index, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64)
    pairs, when, judged, first_k = completion_order(pair_index, answered_at, judges_per_pair)
    labels = volunteer_labels(len(a_all), pair_index[first_k], codes[first_k])
    correlation = question.statistic == "pearson"
    labelled = np.isfinite(labels.graded[pairs]) if correlation else labels.binary[pairs] >= 0
    keep = labelled & np.isfinite(a_all[pairs]) & np.isfinite(b_all[pairs])
    pairs, when, judged = pairs[keep], when[keep], judged[keep]
    total = len(pair_index)
    if not len(pairs):
        empty = State(0, total, None, None, None)
        return Verdict(question, empty, None, None, "no pair has its judges and a label yet", ready=False)
    if correlation:
        paths = pearson_paths(a_all[pairs][None, :], b_all[pairs][None, :], labels.graded[pairs][None, :])
        needed = 2 * question.min_per_class
    else:
        paths = delong_paths(a_all[pairs][None, :], b_all[pairs][None, :], (labels.binary[pairs] == 1)[None, :])
        needed = question.min_per_class
    plan = question.group_sequential() if question.method == GROUP_SEQUENTIAL else None
    if plan is None:
        half = paths.se * multiplier(paths.n, question.alpha, question.planned_pairs)
        mask = settled_mask(paths, question.alpha, question.planned_pairs, needed)[0]
    else:
        # Only a look has an interval (the repeated confidence interval: estimate +- c_k se).
        bound = np.full(paths.n.shape, np.nan)
        for count, c in zip(plan.looks, plan.boundaries, strict=True):
            bound[paths.n == count] = c
        half = paths.se * bound
        mask = group_sequential_mask(paths, plan, needed)[0]

    def state(t: int, judgements: int) -> State:
        diff = float(paths.difference[0, t])
        if not math.isfinite(diff):
            return State(t + 1, judgements, None, None, None, float(when[t]))
        h = float(half[0, t]) if math.isfinite(half[0, t]) else math.inf
        low, high = (diff - h, diff + h) if math.isfinite(h) else (None, None)
        return State(t + 1, judgements, diff, low, high, float(when[t]))

    current = state(len(pairs) - 1, total)
    first = int(mask.argmax()) if mask.any() else -1
    if first < 0:
        p, q = int(paths.positives[0, -1]), int(paths.negatives[0, -1])
        if correlation and p < needed:
            reason = f"waiting for {needed} pairs with a graded label (now {p})"
            return Verdict(question, current, None, None, reason, ready=False)
        if min(p, q) < needed:
            reason = (
                f"waiting for {question.min_per_class} paraphrases and {question.min_per_class} "
                f"non-paraphrases (now {p} and {q})"
            )
            return Verdict(question, current, None, None, reason, ready=False)
        if plan is not None:
            return Verdict(question, current, None, None, _waiting_for_look(plan, current.pairs))
        return Verdict(question, current, None, None, "the always-valid interval still contains 0")
    settled = state(first, int(judged[first]))
    assert settled.difference is not None
    better = question.metric_a if settled.difference > 0 else question.metric_b
    if plan is not None:
        look = plan.looks.index(settled.pairs) + 1
        return Verdict(question, current, settled, better, f"look {look} of {len(plan.looks)} crossed its boundary")
    return Verdict(question, current, settled, better, "the always-valid interval left 0")


def _waiting_for_look(plan: GroupSequentialPlan, pairs: int) -> str:
    """Why a group-sequential plan has not settled: its next look, or its end."""
    ahead = [
        (k, count, c) for k, (count, c) in enumerate(zip(plan.looks, plan.boundaries, strict=True)) if count > pairs
    ]
    if not ahead:
        return (
            f"the plan's last look ({plan.max_pairs} labelled pairs) found no difference at alpha = {plan.alpha:g}: "
            "the campaign may stop"
        )
    k, count, c = ahead[0]
    return (
        f"the plan decides only at its looks; next: look {k + 1} of {len(plan.looks)} at {count} labelled pairs, "
        f"where |\u0394| / se must reach {c:.2f}"
    )
