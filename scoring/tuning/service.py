"""Tune a judge model on a campaign's labels: the request, its record, the queue, the dashboard's note.

A tuning (``manage.py tune_judge``, the ``scoring.tuning.tasks.tune_judge`` task) takes a campaign's
labelled pairs and trains LoRA adapters for one judge model and one ParaPLUIE template
(:mod:`scoring.metrics.judge_training`); the result is a tuned judge, a judge model of its own
(:mod:`scoring.metrics.tuned`), with its configuration beside the base model's. Here:

* :func:`labelled_pairs`: the training data, the campaign's human reference as the dashboard
  computes it: the volunteers' majority with the excluded volunteers left out (the campaign's
  quality rule and the staff's overrides, :mod:`annotate.quality`), or the imported gold labels;
  pairs without a binary label (a tie, only Don't know, unjudged) are left out;
* :func:`request`: checks everything that can be checked before training (the campaign, the
  judge model, the template, the options, enough labelled pairs of both classes) and records
  a :class:`~scoring.models.TunedJudge` row; nothing is stored when something is wrong;
* :func:`send`: queues the training on the base judge's queue (``llm.<model>``: the worker that
  holds that model, a GPU worker where there is one) once the row is committed;
* :func:`dashboard_notes`: what the dashboard says of the tuned judges scored on a campaign
  (cross-fitted when tuned on its own labels) and of a tuning in progress.

The training and the scoring afterwards are the worker side (:mod:`scoring.tuning.run`);
this module imports no model library, so the pages can call it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet

from annotate.models import Campaign, Pair
from scoring.metrics import tuned
from scoring.metrics.base import MetricUnavailable
from scoring.metrics.judge_training_options import LabelledPair, TuningError, TuningOptions
from scoring.metrics.judges import JudgeModel, configured_models
from scoring.metrics.templates import TemplateError, TemplateKind, get_template
from scoring.models import TunedJudge

logger = logging.getLogger(__name__)

TUNE_TASK = "scoring.tuning.tasks.tune_judge"
REFERENCES = ("volunteers", "gold")


class TuningRequestError(ValueError):
    """A tuning that cannot start; the message names what is wrong."""


@dataclass(frozen=True)
class TrainingData:
    """A campaign's labelled pairs for tuning, and what was left out."""

    pairs: list[LabelledPair]
    unlabelled: int  # no binary label: unjudged, a tie, Don't know only

    @property
    def positives(self) -> int:
        return sum(1 for pair in self.pairs if pair.label)

    @property
    def negatives(self) -> int:
        return len(self.pairs) - self.positives


def labelled_pairs(campaign: Campaign, reference: str = "volunteers") -> TrainingData:
    """The campaign's pairs with a binary human label (see the module docstring), by pair id."""
    from scoring.analysis.labels import Reference
    from scoring.analysis.report import human_labels
    from scoring.reports import dataset

    if reference not in REFERENCES:
        raise TuningRequestError(f"reference must be one of {', '.join(REFERENCES)}, got {reference!r}")
    data = dataset.load(campaign, dataset.Filters.build(reference=reference, exclude_flagged=True))
    labels = human_labels(data, Reference(reference))
    binary = zip(data.pair_ids.tolist(), labels.binary.tolist(), strict=True)
    wanted = {int(pk): bool(label) for pk, label in binary if label >= 0}
    texts = Pair.objects.filter(id__in=list(wanted)).order_by("id").values_list("id", "source", "hypothesis")
    pairs = [LabelledPair(source, hypothesis, wanted[pk], pk) for pk, source, hypothesis in texts]
    return TrainingData(pairs, len(data.pair_ids) - len(wanted))


def base_judge(name: str | None) -> JudgeModel:
    """The configured judge model to tune (the first one by default); a tuned judge is not tuned again."""
    configured = configured_models()
    served = {judge.name: judge.model for judge in configured if judge.is_served}
    if name in served:
        raise TuningRequestError(
            f"judge model {name!r} is served by {served[name]}: its weights are not here to tune; "
            "tune a judge model that runs in a worker"
        )
    # A served judge's weights sit on its server: only in-process models are tuned here.
    judges = [judge for judge in configured if judge.tuned_from is None and not judge.is_served]
    if not judges:
        raise TuningRequestError("no judge model is configured (PARAPLUIE_MODELS)")
    if not name:
        return judges[0]
    for judge in judges:
        if judge.name == name:
            return judge
    raise TuningRequestError(
        f"unknown judge model {name!r}; the configured ones (PARAPLUIE_MODELS) are {', '.join(j.name for j in judges)}"
    )


def start_judge(base: JudgeModel, name: str) -> JudgeModel:
    """The tuned judge ``name`` to start from: one tuned from ``base`` (:class:`TuningRequestError` lists them)."""
    candidates = [judge for judge in configured_models() if judge.tuned_from == base.name]
    for judge in candidates:
        if judge.name == name:
            return judge
    known = ", ".join(judge.name for judge in candidates) or "none yet"
    raise TuningRequestError(f"no tuned judge {name!r} to start from; those tuned from {base.name} are: {known}")


def default_options(**overrides: Any) -> TuningOptions:
    """The defaults (seed ``PARAEVAL_SEED``, probe share ``PARAEVAL_TUNING_PROBE_SHARE``), with
    ``overrides`` (``None`` values ignored)."""
    options = TuningOptions(
        seed=int(settings.PARAEVAL_SEED), folds=5, probe_share=float(settings.PARAEVAL_TUNING_PROBE_SHARE)
    )
    return replace(options, **{key: value for key, value in overrides.items() if value is not None})


def request(
    campaign: Campaign, *, judge: str | None = None, reference: str = "volunteers", options: TuningOptions
) -> TunedJudge:
    """Check a tuning and record it (status queued); :class:`TuningRequestError` says what is wrong."""
    model = base_judge(judge)
    try:
        options.check()
        template = get_template(options.template)
    except (TuningError, TemplateError) as error:
        raise TuningRequestError(str(error)) from None
    if template.kind is TemplateKind.INDIRECT:
        raise TuningRequestError(
            f"template {template.name!r} generates an explanation first (INDIRECT): tune with a question "
            "template such as direct or fs_direct"
        )
    if template.language and template.language != campaign.language:
        raise TuningRequestError(
            f"template {template.name!r} is written for {template.language} pairs; campaign {campaign.slug!r} is in "
            f"{campaign.language}"
        )
    if options.folds < 2:
        raise TuningRequestError(
            f"folds must be at least 2, got {options.folds}: the tuned judge scores this campaign by cross-fitting "
            "(each pair by an adapter that never saw it)"
        )
    data = labelled_pairs(campaign, reference)
    if options.start_from:
        _check_start(model, options, campaign, data)
    if data.positives < options.folds or data.negatives < options.folds:
        raise TuningRequestError(
            f"campaign {campaign.slug!r} has {data.positives} pairs labelled paraphrase and {data.negatives} labelled "
            f"not ({reference}; {data.unlabelled} without a label): tuning with {options.folds} folds needs at least "
            f"{options.folds} of each"
        )
    return TunedJudge.objects.create(
        campaign=campaign,
        reference=reference,
        base_judge=model.name,
        template=template.name,
        options=options.identity(),
    )


def _check_start(model: JudgeModel, options: TuningOptions, campaign: Campaign, data: TrainingData) -> None:
    """What can be told before training about the judge to start from (the worker checks again,
    on the pairs it keeps): its adapters' shape, and that it never saw this campaign's pairs."""
    judge = start_judge(model, options.start_from)
    try:
        manifest = tuned.read_manifest(judge.model)
        seen = tuned.read_trained(judge.model)
    except MetricUnavailable as error:
        raise TuningRequestError(str(error)) from None
    problems = options.start_mismatches(manifest.settings)
    if problems:
        raise TuningRequestError(
            f"cannot start from {judge.name}: its adapters have another shape ({'; '.join(problems)})"
        )
    overlap = sum(1 for pair in data.pairs if pair.key in seen)
    if overlap:
        raise TuningRequestError(
            f"cannot start from {judge.name}: it was trained on {overlap} of the labelled pairs of campaign "
            f"{campaign.slug!r}, so every fold would start from an adapter that saw them; start from a judge "
            "tuned on other data"
        )


def start_folder(row: TunedJudge) -> Path | None:
    """The folder of the tuned judge a tuning starts from (None: from scratch)."""
    name = str(row.options.get("start_from") or "")
    return Path(start_judge(base_judge(row.base_judge), name).model) if name else None


def options_of(row: TunedJudge) -> TuningOptions:
    """The row's training settings as options."""
    return TuningOptions.from_identity(row.options)


def queue_of(row: TunedJudge) -> str:
    """The queue the training goes to: its base judge's (the worker that holds that model)."""
    return base_judge(row.base_judge).queue


def send(row: TunedJudge) -> None:
    """Queue the training once the row is committed (a broker that cannot be reached is logged)."""
    from paraeval import broker

    message = broker.TaskMessage(TUNE_TASK, (row.pk,), queue_of(row))

    def publish() -> None:
        result = broker.send([message])
        if result.not_sent:
            logger.warning(
                "tuning %s not queued: %s; run it with manage.py tune_judge --run %s", row.pk, result.error, row.pk
            )

    transaction.on_commit(publish)


@dataclass(frozen=True)
class DashboardNote:
    """One sentence on the dashboard about a tuned judge on this campaign."""

    kind: str  # "cross-fitted", "running", "queued", "failed"
    label: str
    text: str


def _metric_label(row: TunedJudge) -> str:
    if row.metric_config is not None:
        return row.metric_config.label
    return f"parapluie_{row.template}[{row.label or row.base_judge + ' tuned'}]"


def dashboard_notes(campaign: Campaign) -> list[DashboardNote]:
    """What the dashboard says about the tuned judges of this campaign: the ones tuned on its
    labels (their scores here are cross-fitted), and tunings queued, running or failed. One query."""
    notes = []
    rows = (
        TunedJudge.objects.filter(campaign=campaign).select_related("metric_config").order_by("-created_at", "-id")[:10]
    )
    for row in rows:
        label = _metric_label(row)
        if row.status == TunedJudge.Status.DONE:
            folds = row.options.get("folds", 0)
            pairs = len(row.folds)
            reference = (
                "the volunteers' majority, excluded volunteers left out"
                if row.reference == "volunteers"
                else "gold labels"
            )
            start = row.options.get("start_from")
            started = f" It started from {start}, a judge tuned on other pairs." if start else ""
            notes.append(
                DashboardNote(
                    "cross-fitted",
                    label,
                    f"{label} was tuned on this campaign's own labels ({pairs} pairs, {reference}): its scores here "
                    f"are cross-fitted over {folds} folds, each pair scored by an adapter that never saw it, so its "
                    f"agreement figures are not fitted on the pairs they are measured on.{started}",
                )
            )
        elif row.status in (TunedJudge.Status.QUEUED, TunedJudge.Status.RUNNING):
            progress = row.progress or {}
            where = ""
            if progress.get("steps"):
                auc = progress.get("validation_auc")
                where = (
                    f": adapter {progress.get('adapter')} ({int(progress.get('adapter_index', 0)) + 1} of "
                    f"{progress.get('adapters')}), step {progress.get('step')} of {progress.get('steps')}"
                    + (f", validation AUC {auc:.3f}" if isinstance(auc, float) else "")
                )
            notes.append(
                DashboardNote(
                    str(row.status), label, f"Tuning {row.base_judge} on this campaign's labels is {row.status}{where}."
                )
            )
        elif row.status == TunedJudge.Status.FAILED:
            notes.append(
                DashboardNote("failed", label, f"Tuning {row.base_judge} on this campaign failed: {row.error[:300]}")
            )
    return notes


@dataclass(frozen=True)
class TuningLine:
    """One tuning as the staff page lists it (``manage.py tune_judge --list`` says the same)."""

    pk: int
    status: str
    where: str  # "adapter fold-2 step 40 of 120" while it runs, else ""
    judge: str  # the tuned judge's label once known, else its base judge
    campaign: str  # the campaign's label (name and slug), or "-" once deleted
    reference: str
    template: str
    best_auc: float | None
    error: str
    queue: str


def tuning_lines(visible: QuerySet[Campaign] | None = None, limit: int = 50) -> list[TuningLine]:
    """The latest tunings, newest first, with where each one is (one query).

    With ``visible``, only tunings of those campaigns (a staff member's teams') and those of no campaign.
    """
    rows = TunedJudge.objects.select_related("campaign")
    if visible is not None:
        rows = rows.filter(Q(campaign__isnull=True) | Q(campaign__in=visible))
    lines = []
    for row in rows[:limit]:
        progress = row.progress or {}
        where = ""
        if row.status == TunedJudge.Status.RUNNING and progress.get("steps"):
            where = f"adapter {progress.get('adapter')} step {progress.get('step')} of {progress.get('steps')}"
        auc = progress.get("best_auc")
        try:
            queue = queue_of(row)
        except TuningRequestError:  # its base judge is no longer configured
            queue = ""
        lines.append(
            TuningLine(
                pk=row.pk,
                status=str(row.status),
                where=where,
                judge=row.label or row.base_judge,
                campaign=row.campaign.label if row.campaign else "-",
                reference=row.reference,
                template=row.template,
                best_auc=auc if isinstance(auc, float) else None,
                error=row.error[:300],
                queue=queue,
            )
        )
    return lines
