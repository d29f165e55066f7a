"""Plan a campaign's size before the first volunteer: interval width and power per (pairs x judges).

The researcher asks one question of a campaign: is metric A's ROC AUC against the volunteers'
labels different from metric B's (the paired ΔAUC, DeLong's test)? is A's Pearson r with the
volunteers' graded scores different from B's (the Williams test)? or, over every metric, which
significance clusters come out (DeLong, Holm over every two metrics, as the dashboard ranks
them)? :func:`plan` predicts, for each number of pairs and each number of judges per pair, the
expected width of the 95 % interval of the difference and the power of the test (alpha = 0.05,
two-sided), and what the cell costs on a crowd platform.

The model (a latent truth and independent judges)
-------------------------------------------------
Every pool pair i has a probability ``truth[i]`` of really being a paraphrase; each judge gives
the true answer with probability ``judge_accuracy`` (q), independently of the pair and of the
other judges (symmetric label noise; a flip probability e is q = 1 - e). A pair's binary label is
the majority of its k judges, a tie gives no label (as the dashboard reads them, see
:mod:`scoring.analysis.labels`); its graded value is the share of its judges who said
"paraphrase" (an affine image of the mean 1-4 answer when judges answer on two levels, and
Pearson r does not see affine maps). The metrics' scores on the pool are known: the workers
compute them before any volunteer arrives. Where the truth comes from is the caller's choice
(:func:`truth_from_pilot`, :func:`truth_from_consensus`, or gold labels): the prediction below
holds for any truth.

Which method, and why
---------------------
**A normal approximation, computed exactly from the model, not a simulation.** Under the model,
each pool pair with its random label is one draw from a known population, so the quantities
behind DeLong's test can be computed in closed form on the pool (O(N log N) per metric, via
sorting): with o_i = P(pair i's majority label says paraphrase),

* each metric's AUC against the noisy labels is A = sum_ij o_i (1 - o_j) H(s_i - s_j) / (sum o
  sum (1 - o)), H the step (ties 1/2); the difference delta = A_a - A_b is what a campaign
  estimates (label noise attenuates it: with prevalence p and error e, delta_noisy = delta_true
  x (1 - a - b), a and b the shares of wrong labels among the observed positives and negatives);
* DeLong's variance for n labelled pairs is var(V10_a - V10_b) / (n p) + var(V01_a - V01_b) /
  (n (1 - p)), the structural components V10, V01 weighted by o and 1 - o over the pool;
* the power of the two-sided test is Phi(|delta| / se - z) + Phi(-|delta| / se - z), z the
  1 - alpha / 2 normal quantile, and the expected interval width 2 z se.

For Pearson r, the graded value of a pair is a mixture of two binomials, whose first four
moments are exact; the variance of r_a - r_b is the variance of its influence function (the
delta method, valid without normality: the vote shares are far from normal at one judge), and
the power is that of the Williams test the dashboard runs, whose standard error at the expected
correlations is fixed: P(|r_a - r_b| > t se_W) with r_a - r_b normal. For the clusters the
same DeLong components give the covariance of every metric's AUC; the Holm-adjusted tests over
every two metrics are not a closed form, so the planner draws the AUC vector from its normal
approximation (a few thousand draws, seeded) and applies Holm: the predicted figure is the
expected share of the compared metric pairs that come out significantly different.

The stopping rules' own power (AUC and correlation): a campaign stopped by its rule is not a
fixed design. :class:`RuleModel` hands the same moments (the difference, the variance of one
observation's contribution, the part of it the pool's size removes) to
:mod:`scoring.analysis.sequential_design`, which computes the chance that the confidence
sequence, or the group-sequential plan, has stopped by n pairs (the first passage of a Gaussian
random walk over the rule's boundary, by recursive numerical integration), and
:meth:`RuleModel.sizes` the pairs each way of deciding needs for power 0.8.

Why not a simulation of whole campaigns: it costs thousands of campaigns per cell (seconds to
minutes on a web request), and it would be checking the model against itself. The closed form
is instant and is *checked* against such simulations (:func:`simulate`, the tests and
``benchmarks/planning.py``): the predicted power lies within 0.05 of the power observed over
repeated simulated campaigns. What it leaves out: the labelled count is taken at its expectation
(ties at an even number of judges drop pairs), the pairs are a small sample of the pool (no
finite-population correction: at n close to the pool size the prediction is conservative), and
the judges' noise is the same on every pair (real disagreement concentrates on hard pairs).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from scoring.analysis import sequential_design
from scoring.analysis.bootstrap import DEFAULT_SEED
from scoring.analysis.paired import delong_components, delong_test, holm, williams_test
from scoring.analysis.sequential import MIN_PER_CLASS

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

DEFAULT_ALPHA = 0.05
DEFAULT_PAIRS = (100, 200, 400, 800)
DEFAULT_JUDGES = (1, 3, 5)
MAX_JUDGES = 25
MAX_CELLS = 200
# Normal draws behind the clusters' Holm-adjusted prediction (seeded).
CLUSTER_DRAWS = 4000
# A pilot needs this many labelled pairs of each class before its labels stand for the truth.
MIN_PILOT_PER_CLASS = 10


class Question(StrEnum):
    """What the campaign is for."""

    AUC = "auc"
    CORRELATION = "correlation"
    CLUSTERS = "clusters"

    @property
    def label(self) -> str:
        return QUESTION_LABELS[self]


QUESTION_LABELS = {
    Question.AUC: "Paired \u0394AUC of two metrics (DeLong)",
    Question.CORRELATION: "Difference of two metrics' Pearson r with the volunteers' scores (Williams)",
    Question.CLUSTERS: "Significance clusters of all metrics (DeLong, Holm)",
}


class PlanError(ValueError):
    """The plan cannot be made; the message says what is wrong."""


def majority_outcome(accuracy: float, judges: int) -> tuple[float, float]:
    """(P(the majority of ``judges`` is wrong), P(a tie)) when each judge is right with
    probability ``accuracy``, independently."""
    wrong = np.arange(judges + 1)
    pmf = stats.binom.pmf(wrong, judges, 1 - accuracy)
    tie = float(pmf[judges // 2]) if judges % 2 == 0 else 0.0
    return float(pmf[wrong * 2 > judges].sum()), tie


@dataclass(frozen=True)
class NoiseModel:
    """How often one judge gives the true answer; ``source`` says where the figure comes from."""

    judge_accuracy: float
    source: str = "assumed"

    def __post_init__(self) -> None:
        if not 0.5 < self.judge_accuracy <= 1:
            raise PlanError(
                "judge accuracy must be above 0.5 and at most 1 (flip probability below 0.5), "
                f"got {self.judge_accuracy}"
            )

    @classmethod
    def from_flip(cls, flip: float, source: str = "assumed") -> NoiseModel:
        if not 0 <= flip < 0.5:
            raise PlanError(f"noise (the flip probability of one judge) must be at least 0 and below 0.5, got {flip}")
        return cls(1 - flip, source)

    @property
    def flip(self) -> float:
        return 1 - self.judge_accuracy


@dataclass(frozen=True)
class PlanInput:
    """The pool as the planner sees it: oriented scores (metrics x pool pairs, higher: more of a
    paraphrase, finite), each pair's probability of truly being a paraphrase, the noise."""

    metric_names: list[str]
    scores: FloatArray
    truth: FloatArray
    noise: NoiseModel
    truth_source: str = "given"

    def __post_init__(self) -> None:
        if self.scores.ndim != 2 or self.scores.shape[0] != len(self.metric_names):
            raise PlanError(f"scores must be metrics x pairs for {len(self.metric_names)} metrics")
        if self.scores.shape[1] != len(self.truth):
            raise PlanError(f"{len(self.truth)} truth values for {self.scores.shape[1]} pairs")
        if not np.all(np.isfinite(self.scores)):
            raise PlanError("scores must be finite (keep the pairs every compared metric scored)")
        if np.any((self.truth < 0) | (self.truth > 1)) or not np.all(np.isfinite(self.truth)):
            raise PlanError("truth values are probabilities between 0 and 1")
        if len(self.truth) < 4:
            raise PlanError(f"the pool has {len(self.truth)} scored pairs: at least 4 are needed to plan")


@dataclass(frozen=True)
class Cell:
    """One (pairs x judges) cell: what a campaign of that size should show."""

    pairs: int
    judges: int
    labelled: float  # expected labelled pairs (ties at an even number of judges give none)
    difference: float  # expected difference (A - B), at this noise; clusters: mean |difference|
    width: float  # expected width of the 95 % interval of the difference (clusters: mean over comparisons)
    power: float  # P(the test says p < alpha); clusters: expected share of comparisons separated
    judgements: int
    participants: int | None = None  # pairs x judges / pairs per participant, rounded up
    cost: float | None = None  # participants x reward x (1 + platform fee share)
    # The stopping rules' own power (AUC and correlation; None for the clusters): the confidence
    # sequence tuned at this size has left 0 by it; the group-sequential plan planned at this size
    # (its maximum ``group_sequential_max`` pairs, a little more) has rejected at one of its looks.
    power_sequence: float | None = None
    power_group_sequential: float | None = None
    group_sequential_max: int | None = None


@dataclass(frozen=True)
class RuleSizes:
    """Per number of judges: the pairs each way of deciding needs for ``TARGET_POWER`` (None: more
    than the pool has), with each rule's power there."""

    judges: int
    fixed: int | None  # one test at the end (the fixed design)
    sequence: int | None  # the confidence sequence read after every judgement, tuned at that size
    sequence_power: float | None
    group_sequential: int | None  # the group-sequential plan's maximum size
    group_sequential_power: float | None
    group_sequential_planned: int | None = None  # the size it is planned at (its maximum: this x the inflation)


@dataclass(frozen=True)
class Plan:
    """The grid and what it rests on."""

    question: Question
    metrics: list[str]
    alpha: float
    noise: NoiseModel
    truth_source: str
    pool_pairs: int
    prevalence: float  # expected share of true paraphrases in the pool
    true_difference: float  # the difference with noise-free labels (clusters: mean |difference|)
    cells: list[Cell] = field(default_factory=list)
    reward: float | None = None
    fee: float = 0.0
    pairs_per_participant: int | None = None
    looks: int = sequential_design.DEFAULT_LOOKS  # the group-sequential plan's looks
    sizes: list[RuleSizes] = field(default_factory=list)

    def cell(self, pairs: int, judges: int) -> Cell:
        return next(cell for cell in self.cells if cell.pairs == pairs and cell.judges == judges)


# --- the model's moments on the pool -------------------------------------------------------------


def _below(scores: FloatArray, weights: FloatArray) -> FloatArray:
    """For each pair: sum of ``weights`` of the pairs scored lower, ties counted 1/2."""
    order = np.argsort(scores, kind="stable")
    ordered = scores[order]
    cumulative = np.concatenate([[0.0], np.cumsum(weights[order])])
    left = np.searchsorted(ordered, scores, "left")
    right = np.searchsorted(ordered, scores, "right")
    out: FloatArray = cumulative[left] + (cumulative[right] - cumulative[left]) / 2
    return out


def auc_components(scores: FloatArray, positive: FloatArray) -> tuple[FloatArray, FloatArray]:
    """DeLong's structural components over the pool when pair i is a positive with probability
    ``positive[i]``: V10[i] = weighted share of negatives scored below i, V01[j] = weighted share
    of positives scored above j (ties 1/2). The AUC is the positive-weighted mean of V10."""
    negative = 1 - positive
    v10 = _below(scores, negative) / negative.sum()
    v01 = (positive.sum() - _below(scores, positive)) / positive.sum()
    return v10, v01


def label_probability(truth: FloatArray, error: float) -> FloatArray:
    """P(the pair's label says paraphrase) when a label is wrong with probability ``error``."""
    out: FloatArray = truth * (1 - error) + (1 - truth) * error
    return out


@dataclass(frozen=True)
class AucMoments:
    """Every metric's expected AUC against the labels, and the covariance of the AUC estimates
    times the labelled pairs (so the covariance at n labelled pairs is ``covariance / n``)."""

    auc: FloatArray
    covariance: FloatArray
    prevalence: float
    # The part of ``covariance`` due to which pairs are drawn (the covariance over the pool of each
    # pair's expected influence): drawing n of the pool's N pairs without replacement removes
    # n / N of it from the estimates' spread, not from DeLong's standard error.
    between: FloatArray


def auc_moments(scores: FloatArray, truth: FloatArray, error: float) -> AucMoments:
    """The AUCs and their DeLong covariance under the model, labels wrong with ``error``."""
    o = label_probability(truth, error)
    p = float(o.mean())
    if p <= 0 or p >= 1:
        raise PlanError("the pool's labels would all be of one class: no AUC can be computed")
    components = [auc_components(row, o) for row in scores]
    v10 = np.array([c[0] for c in components])
    v01 = np.array([c[1] for c in components])
    w_pos = o / o.sum()
    w_neg = (1 - o) / (1 - o).sum()
    auc = v10 @ w_pos
    c10 = (v10 - auc[:, None]) * w_pos @ (v10 - auc[:, None]).T
    mean01 = v01 @ w_neg
    c01 = (v01 - mean01[:, None]) * w_neg @ (v01 - mean01[:, None]).T
    # A pair's influence on each AUC is (V10 - A) / p when it is labelled a paraphrase, (V01 - A) /
    # (1 - p) when not; its expectation over the label varies from pair to pair.
    expected = o * (v10 - auc[:, None]) / p + (1 - o) * (v01 - auc[:, None]) / (1 - p)
    centred = expected - expected.mean(axis=1, keepdims=True)
    between = centred @ centred.T / len(o)
    return AucMoments(auc=auc, covariance=c10 / p + c01 / (1 - p), prevalence=p, between=between)


def _vote_share_moments(truth: FloatArray, accuracy: float, judges: int) -> FloatArray:
    """E[y^j], j = 0..4, of each pair's share of "paraphrase" votes among ``judges`` (pairs x 5)."""
    b = np.arange(judges + 1)
    share = b / judges
    yes_if_true = stats.binom.pmf(b, judges, accuracy)
    yes_if_false = stats.binom.pmf(b, judges, 1 - accuracy)
    pmf = truth[:, None] * yes_if_true[None, :] + (1 - truth)[:, None] * yes_if_false[None, :]
    out: FloatArray = np.stack([pmf @ share**j for j in range(5)], axis=1)
    return out


@dataclass(frozen=True)
class CorrelationMoments:
    """Each metric's expected Pearson r with the graded values, their correlation with each
    other, and the variance of r_a - r_b times the pairs (delta method)."""

    r_a: float
    r_b: float
    r_ab: float
    variance: float
    between: float  # the part of ``variance`` due to which pairs are drawn (see AucMoments.between)


def correlation_moments(
    a: FloatArray, b: FloatArray, truth: FloatArray, accuracy: float, judges: int
) -> CorrelationMoments:
    """Pearson r of two metrics with the vote share of ``judges`` judges, and the influence-function
    variance of the difference, from the exact moments of the vote share."""
    m = _vote_share_moments(truth, accuracy, judges)
    mean_y = float(m[:, 1].mean())
    var_y = float(m[:, 2].mean()) - mean_y**2
    if var_y <= 0:
        raise PlanError("the volunteers' scores would not vary: no correlation can be computed")
    xa = (a - a.mean()) / a.std()
    xb = (b - b.mean()) / b.std()
    sd_y = math.sqrt(var_y)
    # Moments of the standardised y per pair: E[(y - mu)^j] / sd^j.
    mu = mean_y
    c1 = (m[:, 1] - mu) / sd_y
    c2 = (m[:, 2] - 2 * mu * m[:, 1] + mu**2) / var_y
    c3 = (m[:, 3] - 3 * mu * m[:, 2] + 3 * mu**2 * m[:, 1] - mu**3) / sd_y**3
    c4 = (m[:, 4] - 4 * mu * m[:, 3] + 6 * mu**2 * m[:, 2] - 4 * mu**3 * m[:, 1] + mu**4) / var_y**2
    r_a = float(np.mean(xa * c1))
    r_b = float(np.mean(xb * c1))
    # Influence of r_a - r_b at a pair: k0 + k1 y~ + k2 y~^2 (y~ the standardised graded value).
    k0 = -0.5 * (r_a * xa**2 - r_b * xb**2)
    k1 = xa - xb
    k2 = -0.5 * (r_a - r_b)
    second = k0**2 + 2 * k0 * k1 * c1 + (k1**2 + 2 * k0 * k2) * c2 + 2 * k1 * k2 * c3 + k2**2 * c4
    first = k0 + k1 * c1 + k2 * c2
    variance = float(second.mean() - first.mean() ** 2)
    between = float(first.var())
    return CorrelationMoments(r_a, r_b, float(np.mean(xa * xb)), max(variance, 0.0), min(between, max(variance, 0.0)))


def williams_se(r_a: float, r_b: float, r_ab: float, n: float) -> float:
    """The standard error of r_a - r_b that the Williams test uses at these correlations
    (Steiger 1980, eq. 7, as :func:`scoring.analysis.paired.williams_test` computes it)."""
    det = 1 - r_a**2 - r_b**2 - r_ab**2 + 2 * r_a * r_b * r_ab
    mean = (r_a + r_b) / 2
    inner = 2 * (n - 1) / (n - 3) * det + mean**2 * (1 - r_ab) ** 3
    return math.sqrt(max(inner, 0.0) / ((n - 1) * (1 + r_ab)))


def power_beyond(difference: float, spread: float, threshold: float) -> float:
    """P(|D| > threshold) for D normal with mean ``difference`` and standard deviation ``spread``."""
    if spread <= 0:
        return 1.0 if abs(difference) > threshold else 0.0
    return float(stats.norm.sf((threshold - difference) / spread) + stats.norm.cdf((-threshold - difference) / spread))


def normal_power(difference: float, se: float, alpha: float) -> float:
    """Two-sided power of a z test: Phi(|d| / se - z) + Phi(-|d| / se - z)."""
    if se <= 0:
        return 1.0 if difference != 0 else alpha
    z = float(stats.norm.isf(alpha / 2))
    shift = abs(difference) / se
    return float(stats.norm.cdf(shift - z) + stats.norm.cdf(-shift - z))


# --- the plan ----------------------------------------------------------------------------------


def _check_grid(pairs: list[int], judges: list[int], pool: int) -> None:
    if not pairs or not judges:
        raise PlanError("give at least one number of pairs and one number of judges per pair")
    if len(pairs) * len(judges) > MAX_CELLS:
        raise PlanError(
            f"at most {MAX_CELLS} cells: {len(pairs)} numbers of pairs x {len(judges)} of judges is too many"
        )
    for n in pairs:
        if n < 10:
            raise PlanError(f"pairs: each number must be at least 10, got {n}")
        if n > pool:
            raise PlanError(f"pairs: {n} is more than the {pool} scored pairs of the pool")
    for k in judges:
        if not 1 <= k <= MAX_JUDGES:
            raise PlanError(f"judges per pair: each number must be between 1 and {MAX_JUDGES}, got {k}")


def plan(
    data: PlanInput,
    question: Question,
    pairs: list[int],
    judges: list[int],
    *,
    alpha: float = DEFAULT_ALPHA,
    pairs_per_participant: int | None = None,
    reward: float | None = None,
    fee: float = 0.0,
    seed: int = DEFAULT_SEED,
    looks: int = sequential_design.DEFAULT_LOOKS,
) -> Plan:
    """The grid for ``question``: one :class:`Cell` per (pairs, judges), pairs first.

    AUC and correlation compare the first two metrics of ``data`` (A - B); clusters compare all.
    Cost: ceil(pairs x judges / pairs_per_participant) participants x reward x (1 + fee).
    AUC and correlation also get each stopping rule's own power per cell and, per number of
    judges, the pairs each rule needs for power 0.8 (:class:`RuleSizes`); ``looks``: the
    group-sequential plan's.
    """
    if not 1 <= looks <= sequential_design.MAX_LOOKS:
        raise PlanError(f"looks: from 1 to {sequential_design.MAX_LOOKS}, got {looks}")
    if not 0 < alpha < 0.5:
        raise PlanError(f"alpha must be between 0 and 0.5, got {alpha}")
    if reward is not None and reward < 0:
        raise PlanError(f"reward must be 0 or more, got {reward}")
    if not 0 <= fee < 5:
        raise PlanError(f"fee is a share of the reward (0.33 for a third), got {fee}")
    if pairs_per_participant is not None and pairs_per_participant < 1:
        raise PlanError(f"pairs per participant must be at least 1, got {pairs_per_participant}")
    if len(data.metric_names) < 2:
        raise PlanError(f"the {question.value} question needs at least two metrics, got {len(data.metric_names)}")
    if question is not Question.CLUSTERS and len(data.metric_names) != 2:
        raise PlanError(f"the {question.value} question compares exactly two metrics, got {len(data.metric_names)}")
    pool = len(data.truth)
    _check_grid(pairs, judges, pool)
    q = data.noise.judge_accuracy
    truth_moments = auc_moments(data.scores, data.truth, 0.0)
    true_difference = _headline(question, data, truth_moments)
    cells = []
    models = {k: rule_model(data, question, k, alpha, looks) for k in sorted(set(judges))}
    for n in sorted(set(pairs)):
        for k in sorted(set(judges)):
            error, tie = majority_outcome(q, k)
            labelled = n * (1 - tie)
            drawn = n / pool  # the share of the pool a campaign of n pairs draws
            if question is Question.AUC:
                difference, width, power = _auc_cell(data, error, labelled, drawn, alpha)
            elif question is Question.CORRELATION:
                difference, width, power = _correlation_cell(data, q, k, n, drawn, alpha)
            else:
                difference, width, power = _clusters_cell(data, error, labelled, drawn, alpha, seed)
            participants = math.ceil(n * k / pairs_per_participant) if pairs_per_participant else None
            cost = participants * reward * (1 + fee) if participants is not None and reward is not None else None
            model = models[k]
            rules: tuple[float | None, float | None, int | None] = (None, None, None)
            if model is not None:
                rules = (model.sequence_power(n), *model.group_sequential(n))
            cells.append(Cell(n, k, labelled, difference, width, power, n * k, participants, cost, *rules))
    sizes = [model.sizes(k) for k, model in models.items() if model is not None]
    return Plan(
        question=question,
        metrics=list(data.metric_names),
        alpha=alpha,
        noise=data.noise,
        truth_source=data.truth_source,
        pool_pairs=pool,
        prevalence=float(data.truth.mean()),
        true_difference=true_difference,
        cells=cells,
        reward=reward,
        fee=fee,
        pairs_per_participant=pairs_per_participant,
        looks=looks,
        sizes=sizes,
    )


@dataclass(frozen=True)
class RuleModel:
    """What the stopping rules see at one number of judges: the difference, the variance of one
    observation's contribution as the rule's standard error computes it (``variance`` / n at n
    observations) and the part of it due to which pool pairs are drawn, the observations (labelled
    pairs) per pair, the observations before the rule may settle, and the fixed design's power at
    n pairs. See :mod:`scoring.analysis.sequential_design` for the walk."""

    difference: float
    variance: float
    between: float
    pool: int
    per_pair: float
    start: int
    alpha: float
    looks: int
    fixed_power: Callable[[int], float]

    def walk(self, pairs: int) -> tuple[float, float]:
        """(theta, ratio) of the walk at ``pairs`` pairs drawn from the pool."""
        drawn = min(1.0, pairs / self.pool)
        spread = math.sqrt(max(self.variance - drawn * self.between, 1e-12 * self.variance))
        return self.difference / spread, math.sqrt(self.variance) / spread

    def observations(self, pairs: int) -> int:
        return max(1, round(pairs * self.per_pair))

    def sequence_power(self, pairs: int) -> float:
        """P(the confidence sequence tuned at ``pairs`` pairs has left 0 by them)."""
        n = self.observations(pairs)
        theta, ratio = self.walk(pairs)
        curve = sequential_design.sequence_crossing_curve(theta, n, self.alpha, n, ratio, self.start)
        return float(curve[-1])

    def group_sequential(self, pairs: int) -> tuple[float, int]:
        """(power, maximum pairs) of the group-sequential plan planned at ``pairs`` pairs."""
        n = max(self.observations(pairs), self.looks)
        gs = sequential_design.group_sequential_plan(n, self.looks, self.alpha)
        most = math.ceil(gs.max_pairs / self.per_pair - 1e-9)
        theta, ratio = self.walk(most)
        return sequential_design.group_sequential_power(gs, theta, ratio), most

    def sizes(self, judges: int) -> RuleSizes:
        """The pairs for :data:`sequential_design.TARGET_POWER` under each way of deciding."""
        target = sequential_design.TARGET_POWER
        limit = self.pool  # a campaign draws distinct pairs of its pool
        fixed = sequential_design.smallest_size(self.fixed_power, min(10, limit), limit, target)
        if fixed is None:
            return RuleSizes(judges, None, None, None, None, None)
        sequence = sequential_design.smallest_size(self.sequence_power, fixed, limit, target)
        planned = sequential_design.smallest_size(lambda n: self.group_sequential(n)[0], fixed, limit, target)
        gs_power, gs_pairs = self.group_sequential(planned) if planned is not None else (None, None)
        if gs_pairs is not None and gs_pairs > limit:
            planned, gs_power, gs_pairs = None, None, None
        return RuleSizes(
            judges,
            fixed,
            sequence,
            None if sequence is None else self.sequence_power(sequence),
            gs_pairs,
            gs_power,
            planned,
        )


def rule_model(data: PlanInput, question: Question, judges: int, alpha: float, looks: int) -> RuleModel | None:
    """The stopping rules' view of the question at ``judges`` judges (None for the clusters,
    which no stopping rule asks, and when the difference has no spread)."""
    pool = len(data.truth)
    q = data.noise.judge_accuracy
    error, tie = majority_outcome(q, judges)
    if question is Question.AUC:
        moments = auc_moments(data.scores, data.truth, error)
        contrast = np.array([1.0, -1.0])
        difference = float(moments.auc[0] - moments.auc[1])
        variance = float(contrast @ moments.covariance @ contrast)
        between = float(contrast @ moments.between @ contrast)
        minority = min(moments.prevalence, 1 - moments.prevalence)
        start = math.ceil(MIN_PER_CLASS / minority) if minority > 0 else 1

        def fixed(pairs: int) -> float:
            return _auc_cell(data, error, pairs * (1 - tie), pairs / pool, alpha)[2]

        per_pair = 1 - tie
    elif question is Question.CORRELATION:
        c = correlation_moments(data.scores[0], data.scores[1], data.truth, q, judges)
        difference, variance, between = c.r_a - c.r_b, c.variance, c.between
        start, per_pair = 2 * MIN_PER_CLASS, 1.0

        def fixed(pairs: int) -> float:
            return _correlation_cell(data, q, judges, max(pairs, 4), pairs / pool, alpha)[2]

    else:
        return None
    if variance <= 0 or per_pair <= 0:
        return None
    return RuleModel(difference, variance, between, pool, per_pair, start, alpha, looks, fixed)


def _headline(question: Question, data: PlanInput, moments: AucMoments) -> float:
    if question is Question.AUC:
        return float(moments.auc[0] - moments.auc[1])
    if question is Question.CORRELATION:
        # Noise-free: every judge right, the graded value is the truth itself.
        c = correlation_moments(data.scores[0], data.scores[1], data.truth, 1.0, 1)
        return c.r_a - c.r_b
    differences = [abs(moments.auc[i] - moments.auc[j]) for i, j in _comparisons(len(data.metric_names))]
    return float(np.mean(differences))


def _comparisons(m: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(m) for j in range(i + 1, m)]


def _auc_cell(data: PlanInput, error: float, labelled: float, drawn: float, alpha: float) -> tuple[float, float, float]:
    moments = auc_moments(data.scores, data.truth, error)
    difference = float(moments.auc[0] - moments.auc[1])
    contrast = np.array([1.0, -1.0])
    total = float(contrast @ moments.covariance @ contrast)
    se = math.sqrt(max(total, 0.0) / labelled)  # DeLong's, as the test computes it
    spread = math.sqrt(max(total - drawn * float(contrast @ moments.between @ contrast), 0.0) / labelled)
    z = float(stats.norm.isf(alpha / 2))
    return difference, 2 * z * se, power_beyond(difference, spread, z * se)


def _correlation_cell(
    data: PlanInput, accuracy: float, judges: int, n: int, drawn: float, alpha: float
) -> tuple[float, float, float]:
    c = correlation_moments(data.scores[0], data.scores[1], data.truth, accuracy, judges)
    difference = c.r_a - c.r_b
    se = math.sqrt(c.variance / n)  # what a pairs bootstrap of r_a - r_b measures
    spread = math.sqrt(max(c.variance - drawn * c.between, 0.0) / n)
    z = float(stats.norm.isf(alpha / 2))
    # The Williams test: significant when |r_a - r_b| > t(n - 3) x se_W, se_W fixed at the
    # expected correlations; r_a - r_b is normal with the delta method's spread.
    threshold = float(stats.t.isf(alpha / 2, n - 3)) * williams_se(c.r_a, c.r_b, c.r_ab, n)
    return difference, 2 * z * se, power_beyond(difference, spread, threshold)


def _clusters_cell(
    data: PlanInput, error: float, labelled: float, drawn: float, alpha: float, seed: int
) -> tuple[float, float, float]:
    moments = auc_moments(data.scores, data.truth, error)
    pairs = _comparisons(len(data.metric_names))
    contrast = np.zeros((len(pairs), len(data.metric_names)))
    for row, (i, j) in enumerate(pairs):
        contrast[row, i], contrast[row, j] = 1.0, -1.0
    means = contrast @ moments.auc
    covariance = contrast @ moments.covariance @ contrast.T / labelled
    se = np.sqrt(np.clip(np.diag(covariance), 0.0, None))  # DeLong's, as the tests compute it
    covariance = covariance - drawn * (contrast @ moments.between @ contrast.T) / labelled
    z = float(stats.norm.isf(alpha / 2))
    rng = np.random.default_rng(seed)
    draws = rng.multivariate_normal(means, covariance, size=CLUSTER_DRAWS, method="eigh")
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2 * stats.norm.sf(np.abs(draws) / se)
    p = np.where(se > 0, p, 1.0)
    separated = holm_matrix(p) < alpha
    return float(np.mean(np.abs(means))), float(np.mean(2 * z * se)), float(separated.mean())


def holm_matrix(p: FloatArray) -> FloatArray:
    """Holm-adjusted p-values of every row of ``p`` (draws x comparisons) at once, as
    :func:`scoring.analysis.paired.holm` adjusts one list."""
    k = p.shape[1]
    order = np.argsort(p, axis=1)
    ordered = np.take_along_axis(p, order, axis=1)
    adjusted = np.minimum(1.0, np.maximum.accumulate(ordered * (k - np.arange(k)), axis=1))
    out = np.empty_like(adjusted)
    np.put_along_axis(out, order, adjusted, axis=1)
    return out


# --- where the truth and the noise come from ------------------------------------------------------


def probit_ranks(scores: FloatArray) -> FloatArray:
    """Each metric's scores as normal quantiles of their percentile ranks (metrics x pairs)."""
    n = scores.shape[1]
    ranks = stats.rankdata(scores, axis=1)
    out: FloatArray = stats.norm.ppf((ranks - 0.5) / n)
    return out


def judge_accuracy_from_pilot(pair_index: IntArray, votes: IntArray) -> float | None:
    """Per-judge accuracy from the agreement of the pilot's judges on the same pairs: with
    symmetric independent noise two judges agree with probability a = q^2 + (1 - q)^2, so
    q = (1 + sqrt(2a - 1)) / 2. ``votes``: 1 paraphrase, 0 not, -1 none (Don't know).
    None when no pair has two binary votes."""
    keep = votes >= 0
    index, vote = pair_index[keep], votes[keep]
    if len(index) == 0:
        return None
    size = int(index.max()) + 1
    yes = np.bincount(index, weights=vote.astype(np.float64), minlength=size)
    total = np.bincount(index, minlength=size).astype(np.float64)
    no = total - yes
    couples = total * (total - 1)
    if couples.sum() == 0:
        return None
    agreement = float((yes * (yes - 1) + no * (no - 1)).sum() / couples.sum())
    return (1 + math.sqrt(max(2 * agreement - 1, 0.0))) / 2


def truth_from_pilot(scores: FloatArray, labelled: IntArray, labels: IntArray, label_error: float) -> FloatArray:
    """P(truly a paraphrase) for every pool pair from the pilot's labels: a logistic regression
    of the labels on the metrics' probit ranks gives P(label says paraphrase), from which the
    labels' error (the pilot's majority error) is taken out: (P - e) / (1 - 2 e), clipped."""
    from sklearn.linear_model import LogisticRegression

    positives = int(np.count_nonzero(labels == 1))
    negatives = int(np.count_nonzero(labels == 0))
    if min(positives, negatives) < MIN_PILOT_PER_CLASS:
        raise PlanError(
            f"the pilot has {positives} paraphrases and {negatives} non-paraphrases: "
            f"at least {MIN_PILOT_PER_CLASS} of each are needed to fit the truth to it"
        )
    features = probit_ranks(scores).T
    model = LogisticRegression(C=1.0).fit(features[labelled], labels)
    observed = model.predict_proba(features)[:, 1]
    out: FloatArray = np.clip((observed - label_error) / (1 - 2 * label_error), 0.0, 1.0)
    return out


def truth_from_consensus(scores: FloatArray, seed: int = DEFAULT_SEED) -> FloatArray:
    """With no label yet: the metrics' consensus as the latent truth. A two-component Gaussian
    mixture (diagonal) on the metrics' probit ranks; a pair's truth is its posterior probability
    of the component where the metrics score higher. A guess (every metric is assumed to point
    at the same truth), replaced by :func:`truth_from_pilot` once volunteers judged."""
    from sklearn.mixture import GaussianMixture

    features = probit_ranks(scores).T
    mixture = GaussianMixture(2, covariance_type="diag", random_state=seed).fit(features)
    upper = int(np.argmax(mixture.means_.mean(axis=1)))
    out: FloatArray = mixture.predict_proba(features)[:, upper]
    return out


# --- repeated simulated campaigns (the check) -----------------------------------------------------


@dataclass(frozen=True)
class Simulated:
    """What repeated simulated campaigns showed for one cell."""

    pairs: int
    judges: int
    campaigns: int
    power: float  # share of campaigns whose test said p < alpha (clusters: share of comparisons)
    difference: float  # mean estimated difference (clusters: mean |difference|)
    spread: float  # standard deviation of the estimated difference (clusters: mean over comparisons)
    width: float  # mean width of the campaigns' 95 % intervals (DeLong's; Pearson: the delta method's)


def simulate(
    data: PlanInput,
    question: Question,
    pairs: int,
    judges: int,
    *,
    campaigns: int = 200,
    alpha: float = DEFAULT_ALPHA,
    seed: int = DEFAULT_SEED,
) -> Simulated:
    """Run ``campaigns`` campaigns under the model and the dashboard's own tests: each draws
    ``pairs`` distinct pool pairs, each pair's truth from ``truth``, ``judges`` votes each right
    with the judge accuracy, the majority as label (ties: none) and the vote share as graded
    value; then DeLong's test (:func:`scoring.analysis.paired.delong_test`), Williams'
    (:func:`~scoring.analysis.paired.williams_test`) or DeLong with Holm over every two metrics."""
    rng = np.random.default_rng(seed)
    q = data.noise.judge_accuracy
    m = len(data.metric_names)
    comparisons = _comparisons(m)
    significant: list[float] = []
    estimates: list[FloatArray] = []
    widths: list[float] = []
    z = float(stats.norm.isf(0.025))
    for _ in range(campaigns):
        drawn = rng.choice(len(data.truth), size=pairs, replace=False)
        true = rng.random(pairs) < data.truth[drawn]
        right = rng.random((pairs, judges)) < q
        yes = np.where(right, true[:, None], ~true[:, None]).sum(axis=1)
        scores = data.scores[:, drawn]
        if question is Question.CORRELATION:
            share = yes / judges
            r = [float(np.corrcoef(scores[i], share)[0, 1]) for i in (0, 1)]
            r_ab = float(np.corrcoef(scores[0], scores[1])[0, 1])
            result = williams_test(r[0], r[1], r_ab, pairs)
            significant.append(float(result is not None and result[1] < alpha))
            estimates.append(np.array([r[0] - r[1]]))
            widths.append(2 * z * _pearson_difference_se(scores[0], scores[1], share))
            continue
        labelled = yes * 2 != judges
        positive = (yes * 2 > judges)[labelled]
        kept = scores[:, labelled]
        if positive.all() or not positive.any():
            significant.append(0.0)
            continue
        components = [delong_components(row, positive) for row in kept]
        tests = [delong_test(components[i], components[j]) for i, j in comparisons]
        widths.append(float(np.mean([2 * z * test[1] for test in tests])))
        if question is Question.AUC:
            significant.append(float(tests[0][2] < alpha))
            estimates.append(np.array([tests[0][0]]))
        else:
            adjusted = holm([test[2] for test in tests])
            significant.append(float(np.mean([p is not None and p < alpha for p in adjusted])))
            estimates.append(np.array([test[0] for test in tests]))
    values = np.array(estimates)
    if question is Question.CLUSTERS:
        difference = float(np.mean(np.abs(values.mean(axis=0))))
        spread = float(np.mean(values.std(axis=0)))
    else:
        difference, spread = float(values.mean()), float(values.std())
    width = float(np.mean(widths)) if widths else math.nan
    return Simulated(pairs, judges, campaigns, float(np.mean(significant)), difference, spread, width)


def _pearson_difference_se(a: FloatArray, b: FloatArray, y: FloatArray) -> float:
    """The plug-in (delta-method) standard error of r(a, y) - r(b, y) on one sample."""
    if y.std() == 0:
        return math.nan
    za, zb, zy = ((v - v.mean()) / v.std() for v in (a, b, y))
    r_a, r_b = float(np.mean(za * zy)), float(np.mean(zb * zy))
    influence = za * zy - r_a / 2 * (za**2 + zy**2) - (zb * zy - r_b / 2 * (zb**2 + zy**2))
    return float(influence.std() / math.sqrt(len(y)))
