"""The worker side of tuning a judge: train, record the tuned judge, score its campaign cross-fitted.

Split from :mod:`scoring.tuning.service` (requests, records, notes: what the pages and the command
read) so that the web process never imports the trainer or the runner. The task
``scoring.tuning.tasks.tune_judge`` and ``manage.py tune_judge`` (in its own process) call :func:`run`.

What a run does, in order:

1. marks the :class:`~scoring.models.TunedJudge` row running (a row already running, done or
   failed is left alone: a message delivered twice trains once);
2. reads the campaign's labelled pairs (:func:`scoring.tuning.service.labelled_pairs`), builds
   the probe pairs of the mix when ``probe_share`` asks for some (:func:`mixed_probes`), and trains
   the adapters on a fresh copy of the base model (:func:`scoring.metrics.judge_training.tune`; each from
   the full adapter of the tuned judge ``start_from`` names, when it names one), storing
   the progress (loss, validation AUC) in the row as it goes;
3. records the tuned judge: its name, folder, label, the fold of every training pair, and its
   metric configuration (``parapluie_<template>[model=<name>]``) beside the base model's;
4. scores the campaign's pairs with it: every training pair by the adapter of its fold (which
   never saw it), the others by the full adapter. Other campaigns' pairs are queued by the
   sweep on the tuned judge's own queue, like any judge model's.
"""

from __future__ import annotations

import gc
import logging
import traceback
from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotate.models import Campaign
from scoring.metrics.base import Metric, MetricError
from scoring.metrics.judge_training import Progress, distinct_pairs, tune
from scoring.metrics.judge_training_options import LabelledPair, TrainingProbe, TuningOptions
from scoring.metrics.lm import load_fresh
from scoring.metrics.templates import get_template
from scoring.models import TunedJudge
from scoring.pipeline import configs, runner
from scoring.tuning.service import TuningRequestError, base_judge, labelled_pairs, options_of, start_folder

logger = logging.getLogger(__name__)

Echo = Callable[[str], None]


def _claim(tuned_id: int) -> TunedJudge | None:
    """Mark the row running if it is queued; None when another run has it (or had it)."""
    with transaction.atomic():
        row = TunedJudge.objects.select_for_update().filter(pk=tuned_id).first()
        if row is None or row.status != TunedJudge.Status.QUEUED:
            return None
        row.status = TunedJudge.Status.RUNNING
        row.started_at = timezone.now()
        row.save(update_fields=["status", "started_at"])
        return row


def run(tuned_id: int, *, echo: Echo | None = None) -> TunedJudge | None:
    """Train the tuning ``tuned_id`` and score its campaign (see the module docstring)."""
    row = _claim(tuned_id)
    if row is None:
        logger.info("tuning %s is not queued (already run or running): nothing to do", tuned_id)
        return None
    try:
        return _train_and_score(row, echo)
    except (MetricError, TuningRequestError, OSError) as error:
        _fail(row, str(error))
    except Exception as error:  # any other failure is stored with its type, for staff to see
        logger.exception("tuning %s failed", tuned_id)
        _fail(row, f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=3)}")
    return row


def _fail(row: TunedJudge, error: str) -> None:
    row.status = TunedJudge.Status.FAILED
    row.error = error[:4000]
    row.finished_at = timezone.now()
    row.save(update_fields=["status", "error", "finished_at"])


def _train_and_score(row: TunedJudge, echo: Echo | None) -> TunedJudge:
    campaign = row.campaign
    if campaign is None:
        raise TuningRequestError(f"tuning {row.pk}: its campaign was deleted")
    options = options_of(row)
    judge = base_judge(row.base_judge)
    data = labelled_pairs(campaign, row.reference)
    start = start_folder(row)

    def progress(state: Progress) -> None:
        if echo is not None:
            echo(state.line())
        row.progress = state.as_dict()
        row.save(update_fields=["progress"])

    probes = mixed_probes(data.pairs, options)
    if echo is not None and probes:
        echo(f"training mix: {len(probes)} probe pairs (share {options.probe_share}) with the labelled pairs")
    lm = load_fresh(judge.model, judge.device, judge.dtype, allow_download=settings.PARAEVAL_ALLOW_MODEL_DOWNLOAD)
    try:
        result = tune(
            lm,
            data.pairs,
            options,
            get_template(options.template),
            settings.PARAPLUIE_TUNED_DIR,
            base_spec=judge.model,
            base_name=judge.name,
            trained_on={"campaign": campaign.slug, "reference": row.reference, "tuning": row.pk},
            progress=progress,
            start=start,
            probes=probes,
        )
    finally:
        del lm  # the training copy (adapters in its layers) is not the one that scores
        gc.collect()
    by_key = {pair.key: pair.id for pair in data.pairs}
    row.name = result.name
    row.label = result.label
    row.folder = str(result.folder)
    row.result = result.summary()
    row.folds = {str(by_key[key]): fold for key, fold in result.folds.items()}
    metric = tuned_metric(row)
    row.metric_config = configs.ensure_metric_config(metric)
    row.status = TunedJudge.Status.DONE
    row.finished_at = timezone.now()
    row.save()
    configs.forget_enabled()
    if echo is not None:
        echo(
            f"tuned judge {row.name} ({row.metric_config.label}) in {result.folder}: {result.pairs} pairs, "
            f"{result.minutes_per_1000:.1f} min of training per 1,000 training pairs"
        )
    summary = score_campaign(row, metric, campaign)
    if echo is not None:
        echo(f"scored {summary.scored} pairs of {campaign.slug} (cross-fitted), {summary.failed} failed")
    return row


def mixed_probes(pairs: list[LabelledPair], options: TuningOptions) -> list[TrainingProbe]:
    """The probe pairs of the training mix: built from the labelled pairs the tuning keeps (the
    same distinct, seeded sample of at most ``max_pairs`` that :func:`~scoring.metrics.judge_training.tune`
    takes), ``probe_share`` of the mix (:func:`scoring.probes.training.training_probes`)."""
    if not options.probe_share:
        return []
    from scoring.probes.training import NotEnoughProbes, training_probes

    kept, _ = distinct_pairs(pairs, options.max_pairs, options.seed)
    try:
        return training_probes(kept, options.probe_share, options.seed)
    except NotEnoughProbes as error:
        raise TuningRequestError(str(error)) from None


def tuned_metric(row: TunedJudge) -> Metric:
    """The tuned judge's ParaPLUIE configuration (its template, on its model)."""
    metrics = configs.build_all(f"parapluie_{row.template}[model={row.name}]")
    return metrics[0]


def score_campaign(row: TunedJudge, metric: Metric, campaign: Campaign) -> runner.RunSummary:
    """Score the campaign's pairs that lack the tuned judge's score (cross-fitted: see the module docstring)."""
    return runner.score_missing(metric, campaign=campaign)
