"""A campaign's planner, Django side: read the pool's scores and any pilot, call the statistics.

The prediction is :mod:`scoring.analysis.planning` (a normal approximation computed exactly
under a latent-truth model). This module reads what the campaign has: every metric's scores on
its pool (the workers compute them before any volunteer arrives), its judgements so far (a
pilot), its gold labels, its pairs per volunteer (``quota``); it chooses where the truth and the
noise come from, and words them. The command ``plan_campaign``, the API's ``plan/`` endpoint and
the campaign's settings page all call :func:`campaign_plan` with a :class:`PlanRequest` parsed
by :func:`parse_request`, so the three refuse the same input with the same words.

Where the truth comes from, in this order: the **pilot** (the campaign's own labelled pairs, at
least ``MIN_PILOT_PER_CLASS`` of each class: a logistic regression of the labels on the metrics'
scores, the labels' noise taken out), the **gold** labels (every scored pool pair has one: an
imported corpus such as MRPC), else the metrics' **consensus** (a two-class mixture on their
scores: a guess, until volunteers have judged). The noise: the flip probability given, else the
pilot's (the agreement of two judges on the same pair), else the request is refused.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings

from annotate.models import Campaign
from scoring.analysis import planning
from scoring.analysis.labels import BINARY_OF_CODE, volunteer_labels
from scoring.analysis.plain import to_json
from scoring.analysis.planning import PlanError, Question
from scoring.reports import dataset

MAX_PAIRS = 999_999
MAX_NOISE = 0.49
MAX_FEE = 1.0
ALPHA_RANGE = (0.001, 0.2)
TRUTH_WORDS = {
    "pilot": "the campaign's pilot: {labelled} labelled pairs, the labels' noise taken out",
    "gold": "the pool's gold labels",
    "consensus": (
        "the metrics' consensus (no volunteer label yet: a guess, replaced by the pilot once volunteers judged)"
    ),
}


@dataclass(frozen=True)
class PlanRequest:
    """What the researcher asks: the question, the metrics (names or labels), the grid, the
    noise (None: the pilot's), the reward per participant and the platform's fee share."""

    question: Question = Question.AUC
    metrics: tuple[str, ...] = ()
    pairs: tuple[int, ...] | None = None  # None: the default grid, up to the pool's size
    judges: tuple[int, ...] = planning.DEFAULT_JUDGES
    noise: float | None = None
    reward: float | None = None
    fee: float = 0.0
    alpha: float = planning.DEFAULT_ALPHA


def _numbers(name: str, text: str, maximum: int) -> tuple[int, ...]:
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts or not all(part.isdigit() for part in parts):
        raise PlanError(f"{name}: whole numbers separated by commas, e.g. 100,200,400; got {text!r}")
    values = tuple(int(part) for part in parts)
    if any(value < 1 or value > maximum for value in values):
        raise PlanError(f"{name}: each number from 1 to {maximum}, got {text!r}")
    return values


def _real(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PlanError(f"{name}: a number, got {text!r}") from None
    if not math.isfinite(value):
        raise PlanError(f"{name}: a finite number, got {text!r}")
    return value


def parse_request(params: Mapping[str, str]) -> PlanRequest:
    """A :class:`PlanRequest` from text parameters (query string, form, command line); a missing or
    empty parameter takes its default; :class:`PlanError` names the parameter that is wrong."""

    def given(name: str) -> str | None:
        value = params.get(name)
        return value.strip() if value and value.strip() else None

    fields: dict[str, Any] = {}
    question = given("question")
    if question is not None:
        choices = [choice.value for choice in Question]
        if question not in choices:
            raise PlanError(f"question: one of {', '.join(choices)}, got {question!r}")
        fields["question"] = Question(question)
    metrics = given("metrics")
    if metrics is not None:
        fields["metrics"] = tuple(name.strip() for name in metrics.split(",") if name.strip())
    if (text := given("pairs")) is not None:
        fields["pairs"] = _numbers("pairs", text, MAX_PAIRS)
    if (text := given("judges")) is not None:
        fields["judges"] = _numbers("judges", text, planning.MAX_JUDGES)
    if (text := given("noise")) is not None:
        fields["noise"] = _real("noise", text)
        if not 0 <= fields["noise"] <= MAX_NOISE:
            raise PlanError(f"noise: the flip probability of one judge, from 0 to {MAX_NOISE}; got {text!r}")
    if (text := given("reward")) is not None:
        fields["reward"] = _real("reward", text)
        if fields["reward"] < 0:
            raise PlanError(f"reward: the payment per participant, 0 or more; got {text!r}")
    if (text := given("fee")) is not None:
        fields["fee"] = _real("fee", text)
        if not 0 <= fields["fee"] <= MAX_FEE:
            raise PlanError(
                f"fee: the platform's fee as a share of the reward, from 0 to 1 (0.33 for a third); got {text!r}"
            )
    if (text := given("alpha")) is not None:
        fields["alpha"] = _real("alpha", text)
        if not ALPHA_RANGE[0] <= fields["alpha"] <= ALPHA_RANGE[1]:
            raise PlanError(f"alpha: from {ALPHA_RANGE[0]} to {ALPHA_RANGE[1]}, got {text!r}")
    return PlanRequest(**fields)


@dataclass(frozen=True)
class CampaignPlan:
    """The plan of one campaign, with where its assumptions come from, in words."""

    campaign: str
    plan: planning.Plan
    truth_words: str
    noise_words: str
    excluded_pairs: int  # pool pairs left out: a compared metric has no score for them

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_json(self.plan)
        out.update(
            campaign=self.campaign,
            question_label=self.plan.question.label,
            judge_accuracy=self.plan.noise.judge_accuracy,
            noise=round(self.plan.noise.flip, 6),
            noise_source=self.plan.noise.source,
            truth=self.truth_words,
            noise_words=self.noise_words,
            excluded_pairs=self.excluded_pairs,
            method=METHOD,
        )
        return out


METHOD = (
    "Normal approximation computed exactly under a latent-truth model (each pool pair truly a paraphrase "
    "with a probability, each judge right with the judge accuracy, the majority as label): DeLong's "
    "variance for the AUCs, the delta method with the Williams test for Pearson r, Holm over normal draws "
    "for the clusters. Checked against simulated campaigns (benchmarks/planning.py). The stopping rules' own "
    "power: the chance a Gaussian random walk with the predicted drift and spread crosses the rule's boundary, "
    "by recursive numerical integration (benchmarks/stopping_rule.py)."
)


def default_pairs(pool: int) -> list[int]:
    """The default numbers of pairs that fit in the pool (the pool itself when none does)."""
    return [n for n in planning.DEFAULT_PAIRS if n <= pool] or [pool]


def _choose_metrics(data_metrics: list[Any], request: PlanRequest) -> list[int]:
    """Positions of the requested metrics (by metric name or configuration label)."""
    known = ", ".join(sorted({metric.label for metric in data_metrics})) or "none yet"
    if not request.metrics:
        if request.question is Question.CLUSTERS:
            if len(data_metrics) < 2:
                raise PlanError(f"metrics: the clusters need two scored metrics at least (scored: {known})")
            return list(range(len(data_metrics)))
        raise PlanError(f"metrics: name the two metrics compared, e.g. metrics=a,b (scored: {known})")
    chosen = []
    for name in request.metrics:
        by_label = [i for i, metric in enumerate(data_metrics) if metric.label == name]
        by_name = [i for i, metric in enumerate(data_metrics) if metric.name == name]
        found = by_label or by_name
        if not found:
            raise PlanError(f"metrics: {name!r} has no scores in this campaign (scored: {known})")
        if len(found) > 1:
            labels = ", ".join(data_metrics[i].label for i in found)
            raise PlanError(f"metrics: {name!r} names several configurations ({labels}): give a label")
        if found[0] in chosen:
            raise PlanError(f"metrics: {name!r} is named twice")
        chosen.append(found[0])
    if request.question is not Question.CLUSTERS and len(chosen) != 2:
        raise PlanError(
            f"metrics: the {request.question.value} question compares exactly two metrics, got {len(chosen)}"
        )
    if len(chosen) < 2:
        raise PlanError("metrics: the clusters need two metrics at least")
    return chosen


def campaign_plan(campaign: Campaign, request: PlanRequest, *, seed: int | None = None) -> CampaignPlan:
    """The grid for ``campaign``; :class:`PlanError` says what is missing or wrong."""
    seed = settings.PARAEVAL_SEED if seed is None else seed
    data = dataset.load(campaign, dataset.Filters())
    chosen = _choose_metrics(data.metrics, request)
    metrics = [data.metrics[i] for i in chosen]
    oriented = np.array([data.scores[i] if data.metrics[i].higher_is_closer else -data.scores[i] for i in chosen])
    scored = np.all(np.isfinite(oriented), axis=0)
    if int(scored.sum()) < 4:
        raise PlanError(
            f"the pool has {int(scored.sum())} pairs scored by every compared metric: score the pairs first"
        )
    scores = oriented[:, scored]

    labels = volunteer_labels(len(data.pair_ids), data.judgements.pair_index, data.judgements.code)
    votes = BINARY_OF_CODE[data.judgements.code].astype(np.int64)
    pilot_accuracy = planning.judge_accuracy_from_pilot(data.judgements.pair_index, votes)
    if request.noise is not None:
        noise = planning.NoiseModel.from_flip(request.noise)
        noise_words = f"assumed: each judge gives the wrong answer with probability {request.noise:g}"
    elif pilot_accuracy is not None and pilot_accuracy < 1:
        noise = planning.NoiseModel(pilot_accuracy, "pilot")
        noise_words = (
            f"from the pilot: judges agree on the same pair as often as judges right "
            f"{100 * pilot_accuracy:.1f} % of the time would"
        )
    else:
        raise PlanError(
            "noise: give the flip probability of one judge (e.g. noise=0.1); the campaign has no pilot with "
            "two judges on one pair who disagree somewhere, to estimate it from"
        )

    pilot = scored & (labels.binary >= 0)
    binary = labels.binary[pilot].astype(np.int64)
    gold = data.gold_label[scored]
    counts = np.bincount(data.judgements.pair_index, minlength=len(data.pair_ids))[pilot]
    if min(int(np.count_nonzero(binary == 1)), int(np.count_nonzero(binary == 0))) >= planning.MIN_PILOT_PER_CLASS:
        judges = int(np.median(counts))
        error = planning.majority_outcome(
            pilot_accuracy if pilot_accuracy is not None else noise.judge_accuracy, judges
        )[0]
        positions = np.flatnonzero(pilot[scored])
        truth = planning.truth_from_pilot(scores, positions, binary, error)
        source = "pilot"
        truth_words = TRUTH_WORDS["pilot"].format(labelled=len(binary))
    elif np.all(np.isfinite(gold)) and 0 < gold.mean() < 1:
        truth, source, truth_words = gold.astype(np.float64), "gold", TRUTH_WORDS["gold"]
    else:
        truth = planning.truth_from_consensus(scores, seed=seed)
        source, truth_words = "consensus", TRUTH_WORDS["consensus"]

    pool = planning.PlanInput([metric.label for metric in metrics], scores, truth, noise, source)
    result = planning.plan(
        pool,
        request.question,
        list(request.pairs) if request.pairs else default_pairs(len(truth)),
        list(request.judges),
        alpha=request.alpha,
        pairs_per_participant=campaign.quota,
        reward=request.reward,
        fee=request.fee,
        seed=seed,
    )
    return CampaignPlan(campaign.slug, result, truth_words, noise_words, int((~scored).sum()))


COLUMNS = (
    "Pairs",
    "Judges per pair",
    "Judgements",
    "Labelled pairs",
    "Expected difference",
    "Interval width",
    "Power, fixed design",
    "Power, confidence sequence",
    "Power, group-sequential (its maximum pairs)",
    "Participants",
    "Cost",
)


def _signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "\u2212")


def table_rows(result: CampaignPlan) -> list[list[str]]:
    """The grid as the command and the settings page show it, one row per cell (COLUMNS)."""
    rows = []
    for cell in result.plan.cells:
        rows.append(
            [
                str(cell.pairs),
                str(cell.judges),
                str(cell.judgements),
                f"{cell.labelled:.0f}",
                _signed(cell.difference),
                f"{cell.width:.3f}",
                f"{cell.power:.2f}",
                "\u2014" if cell.power_sequence is None else f"{cell.power_sequence:.2f}",
                "\u2014"
                if cell.power_group_sequential is None
                else f"{cell.power_group_sequential:.2f} ({cell.group_sequential_max})",
                "\u2014" if cell.participants is None else str(cell.participants),
                "\u2014" if cell.cost is None else f"{cell.cost:.2f}",
            ]
        )
    return rows


def summary(result: CampaignPlan) -> str:
    """One paragraph: the question, the metrics, the difference to find, the assumptions."""
    plan = result.plan
    metrics = " vs ".join(plan.metrics) if plan.question is not Question.CLUSTERS else ", ".join(plan.metrics)
    what = (
        "the mean |\u0394AUC| over every two metrics"
        if plan.question is Question.CLUSTERS
        else ("the \u0394r" if plan.question is Question.CORRELATION else "the \u0394AUC")
    )
    power = (
        "Power: the expected share of the metric pairs Holm-separated"
        if plan.question is Question.CLUSTERS
        else "Power: the chance the test says p < alpha"
    )
    cost = ""
    if plan.reward is not None:
        cost = (
            f" Cost: participants ({plan.pairs_per_participant} pairs each) x reward {plan.reward:g}"
            f" x (1 + fee {plan.fee:g})."
        )
    rules = ""
    if plan.question is not Question.CLUSTERS:
        rules = (
            " Power, fixed design: one test after exactly that many pairs (not what a stopping rule gives). "
            "Power, confidence sequence: the chance the always-valid interval, read after every judgement and "
            "tuned at that many pairs, has left 0 by then. Power, group-sequential: the chance the O'Brien-Fleming "
            f"plan planned at that many pairs ({plan.looks} looks) stops at a look, by its maximum size in brackets."
        )
    return (
        f"{plan.question.label}: {metrics}, on {plan.pool_pairs} scored pool pairs. "
        f"Truth: {result.truth_words}; {100 * plan.prevalence:.0f}\u00a0% paraphrases; {what} with noise-free labels "
        f"is {_signed(plan.true_difference)}. Noise: {result.noise_words}. "
        f"{power} (alpha = {plan.alpha:g}, two-sided); width: of the 95 % interval of the difference.{rules}{cost}"
    )


def sizes_lines(result: CampaignPlan) -> list[str]:
    """Per number of judges: the pairs each way of deciding needs for power 0.8."""

    def pairs(value: int | None) -> str:
        return f"more than the pool's {result.plan.pool_pairs} pairs" if value is None else f"{value} pairs"

    lines = []
    for size in result.plan.sizes:
        gs = (
            f"group-sequential ({result.plan.looks} looks) {pairs(size.group_sequential)} at most"
            f" (planned at {size.group_sequential_planned})"
            if size.group_sequential is not None
            else f"group-sequential ({result.plan.looks} looks) {pairs(None)}"
        )
        lines.append(
            f"Power 0.8 with {size.judges} judge{'s' if size.judges != 1 else ''} per pair: fixed design "
            f"{pairs(size.fixed)}; confidence sequence (stopping rule, read after every judgement) "
            f"{pairs(size.sequence)}; {gs}."
        )
    return lines
