"""Can this metric replace a volunteer? The alternative annotator test (Calderon et al., ACL 2025).

"The Alternative Annotator Test for LLM-as-a-Judge: How to Statistically Justify Replacing Human
Annotators with LLMs". Leave one judge out at a time and ask who represents the *other* judges
better on the pairs that judge answered: the judge, or the metric's decision.

For each judge j and each pair i that j judged (with at least one other judge, and a metric
decision), with H the other judges' binary labels of the pair:

- S(metric) = share of H equal to the metric's decision; S(j) = share of H equal to j's label
  (the paper's accuracy alignment score);
- W_metric = 1[S(metric) >= S(j)], W_judge = 1[S(j) >= S(metric)];
- rho_metric(j) = mean of W_metric, rho_judge(j) = mean of W_judge (advantage probabilities).

H0(j): rho_metric(j) <= rho_judge(j) - epsilon, against H1(j): rho_metric(j) > rho_judge(j) - epsilon,
by a one-sided paired t-test of the per-pair differences W_metric - W_judge against -epsilon.
epsilon is the cost-benefit margin: how much worse than a volunteer the metric may be, given
that it is cheaper and faster (the paper suggests 0.1 for crowd workers, 0.2 for experts).
The p-values of all judges are corrected together by Benjamini-Yekutieli at level alpha (the
tests share pairs, so they are dependent). The winning rate omega = share of judges whose null
is rejected; the metric passes (may replace a volunteer) when omega >= 0.5.

Only judges with at least ``min_pairs`` such pairs take part (a t-test on a handful of 0/1
differences says little), and the test needs three such judges (with two, the "others" of a
judge are a single person); otherwise it says why it was not run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

DEFAULT_EPSILON = 0.1  # volunteers are crowd workers (the paper: 0.1 crowd, 0.2 experts)
MIN_JUDGES = 3
MIN_PAIRS = 30  # per judge
PASS_RATE = 0.5


@dataclass(frozen=True)
class JudgeTest:
    """One left-out judge against the metric."""

    judge: int  # volunteer id
    pairs: int
    rho_metric: float  # share of pairs where the metric aligns with the others at least as well
    rho_judge: float  # share where the judge does
    p_value: float  # one-sided paired t-test of H0: rho_metric <= rho_judge - epsilon
    rejected: bool  # after Benjamini-Yekutieli over the judges


@dataclass(frozen=True)
class AltTestRow:
    metric: int
    judges: int  # judges tested (with at least min_pairs pairs)
    winning_rate: float | None  # share of judges whose null is rejected
    passed: bool | None  # winning_rate >= 0.5
    advantage: float | None  # mean over judges of rho_metric (the paper's average advantage probability)
    tests: list[JudgeTest]
    reason: str | None = None


@dataclass(frozen=True)
class AltTest:
    epsilon: float
    alpha: float
    min_pairs: int
    eligible_judges: int  # judges with at least min_pairs pairs shared with another judge
    rows: list[AltTestRow]
    note: str  # why the test was not run ("" when it was)


def benjamini_yekutieli(p_values: list[float], alpha: float) -> list[bool]:
    """Step-up rejections controlling the false discovery rate under any dependence:
    reject the k smallest p-values, k the largest with p_(k) <= k alpha / (m c(m)), c(m) = sum 1/i."""
    m = len(p_values)
    if m == 0:
        return []
    harmonic = sum(1 / i for i in range(1, m + 1))
    order = np.argsort(p_values, kind="stable")
    passing = [rank for rank in range(1, m + 1) if p_values[order[rank - 1]] <= rank * alpha / (m * harmonic)]
    k = max(passing, default=0)
    rejected = [False] * m
    for position in order[:k]:
        rejected[int(position)] = True
    return rejected


def paired_t_p(differences: NDArray[np.float64], margin: float) -> float:
    """One-sided p-value of H0: mean(differences) <= margin (t-test, n - 1 degrees of freedom)."""
    n = len(differences)
    mean = float(differences.mean())
    sd = float(differences.std(ddof=1)) if n > 1 else 0.0
    if sd == 0 or not math.isfinite(sd):
        return 0.0 if mean > margin else 1.0
    t = (mean - margin) / (sd / math.sqrt(n))
    return float(stats.t.sf(t, n - 1))


def _pair_table(
    pair_index: NDArray[np.int64], judge: NDArray[np.int64], binary: NDArray[np.int8]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """Per judgement (labelled ones only): pair, judge, label, and the others' yes / total counts."""
    keep = binary >= 0
    pair, who, label = pair_index[keep], judge[keep], binary[keep].astype(np.int64)
    size = int(pair.max()) + 1 if len(pair) else 0
    yes = np.bincount(pair, weights=label, minlength=size)
    total = np.bincount(pair, minlength=size)
    return pair, who, label, (yes[pair] - label).astype(np.float64), (total[pair] - 1).astype(np.int64)


def alternative_annotator_test(
    pair_index: NDArray[np.int64],
    judge: NDArray[np.int64],
    binary: NDArray[np.int8],
    metric_ids: list[int],
    predictions: NDArray[np.float64],
    epsilon: float = DEFAULT_EPSILON,
    alpha: float = 0.05,
    min_pairs: int = MIN_PAIRS,
) -> AltTest:
    """The alt-test of every metric. ``binary``: each judgement 1/0 (-1 Don't know, left out);
    ``judge``: the volunteer of each judgement; ``predictions``: metrics x pairs 1/0/NaN."""
    pair, who, label, others_yes, others = _pair_table(pair_index, judge, binary)
    shared = others >= 1
    judges, counts = np.unique(who[shared], return_counts=True)
    eligible = [int(j) for j, count in zip(judges, counts, strict=True) if count >= min_pairs]
    note = ""
    if len(eligible) < MIN_JUDGES:
        note = (
            f"Not run: {len(eligible)} judge(s) answered at least {min_pairs} pairs that another judge also "
            f"answered; the alternative annotator test needs {MIN_JUDGES} or more (leave one out, compare with "
            "the others)."
        )
        return AltTest(epsilon, alpha, min_pairs, len(eligible), [], note)
    rows: list[AltTestRow] = []
    for row, metric in enumerate(metric_ids):
        decision = predictions[row][pair]
        usable = shared & np.isfinite(decision)
        # Alignment with the others: share of the others' labels equal to the metric's / the judge's.
        others_equal_metric = np.where(decision == 1, others_yes, others - others_yes)
        others_equal_judge = np.where(label == 1, others_yes, others - others_yes)
        tests: list[JudgeTest] = []
        for j in eligible:
            mine = usable & (who == j)
            n = int(np.count_nonzero(mine))
            if n < min_pairs:
                continue
            s_metric = others_equal_metric[mine] / others[mine]
            s_judge = others_equal_judge[mine] / others[mine]
            w_metric = (s_metric >= s_judge).astype(np.float64)
            w_judge = (s_judge >= s_metric).astype(np.float64)
            p = paired_t_p(w_metric - w_judge, -epsilon)
            tests.append(JudgeTest(j, n, float(w_metric.mean()), float(w_judge.mean()), p, False))
        if len(tests) < MIN_JUDGES:
            rows.append(
                AltTestRow(
                    metric,
                    len(tests),
                    None,
                    None,
                    None,
                    tests,
                    f"the metric decided on at least {min_pairs} pairs of only {len(tests)} judge(s)",
                )
            )
            continue
        rejected = benjamini_yekutieli([test.p_value for test in tests], alpha)
        tests = [
            JudgeTest(t.judge, t.pairs, t.rho_metric, t.rho_judge, t.p_value, r)
            for t, r in zip(tests, rejected, strict=True)
        ]
        rate = sum(rejected) / len(tests)
        rows.append(
            AltTestRow(
                metric,
                len(tests),
                rate,
                rate >= PASS_RATE,
                float(np.mean([t.rho_metric for t in tests])),
                tests,
            )
        )
    return AltTest(epsilon, alpha, min_pairs, len(eligible), rows, note)
