"""Celery tasks of the analyses on the ``interactive`` queue, off the request path: the meta-evaluation
(paired tests etc.), the dashboard report's bootstrap intervals and, for a large campaign, the
dashboard report itself.

Thin: each calls :mod:`scoring.reports.service`, which sends them by name
(``service.META_TASK``, ``service.INTERVALS_TASK``) and never imports this module (tasks ->
service, one way). The statistics are imported inside the tasks: a worker that never runs them
(the ``llm`` queue's) does not load SciPy for them. Safe to run twice: each recomputes and
overwrites the same cache slot for the current version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from celery import shared_task

from annotate.models import Campaign
from scoring.reports import waits

T = TypeVar("T")


def _run_job(job: str | None, compute: Callable[[], T]) -> T | None:
    """``compute()`` under the wait record ``job`` that the polling page reads
    (:mod:`scoring.reports.waits`): nothing when a copy queued again already delivered, or when
    the campaign was deleted meanwhile; the record says finished only once the value is kept."""
    if not waits.started(job):
        return None
    try:
        value = compute()
    except Campaign.DoesNotExist:
        return None
    waits.finished(job)
    return value


def _compute_meta_evaluation(
    campaign_id: int, filters: dict[str, Any], resamples: int, seed: int, job: str | None = None
) -> str | None:
    """Compute and cache the meta-evaluation of ``campaign_id`` under ``filters``; its version.

    ``job``: the wait record the polling page reads (:mod:`scoring.reports.waits`)."""
    from scoring.analysis.meta import MetaOptions
    from scoring.reports import service
    from scoring.reports.dataset import Filters

    checked = Filters.from_dict(filters)
    options = MetaOptions(reference=checked.reference, resamples=resamples, seed=seed)
    return _run_job(job, lambda: service.compute_meta(campaign_id, checked, options).version)


def _compute_report_intervals(
    campaign_id: int, filters: dict[str, Any], resamples: int, seed: int, job: str | None = None
) -> str | None:
    """Compute and cache the bootstrap intervals of the report of ``campaign_id``; their version."""
    from scoring.reports import service
    from scoring.reports.dataset import Filters

    return _run_job(job, lambda: service.compute_intervals(campaign_id, Filters.from_dict(filters), resamples, seed))


def _compute_dashboard_report(
    campaign_id: int, filters: dict[str, Any], resamples: int, seed: int, job: str | None = None
) -> str | None:
    """Compute and keep the dashboard's report of a large campaign (its intervals follow on the
    same queue); its version."""
    from scoring.reports import service
    from scoring.reports.dataset import Filters

    return _run_job(job, lambda: service.compute_points(campaign_id, Filters.from_dict(filters), resamples, seed))


# A report of a million pairs takes about a minute; a hung database must not hold the queue
# for ever (the wait record queues it again after waits.RUN_SECONDS).
REPORT_TIME_LIMIT = 600

compute_meta_evaluation = shared_task(
    name="scoring.reports.tasks.compute_meta_evaluation", ignore_result=True, acks_late=True
)(_compute_meta_evaluation)
compute_report_intervals = shared_task(
    name="scoring.reports.tasks.compute_report_intervals", ignore_result=True, acks_late=True
)(_compute_report_intervals)
compute_dashboard_report = shared_task(
    name="scoring.reports.tasks.compute_dashboard_report",
    ignore_result=True,
    acks_late=True,
    soft_time_limit=REPORT_TIME_LIMIT,
    time_limit=REPORT_TIME_LIMIT + 30,
)(_compute_dashboard_report)


def _refresh_volunteer_verdicts(campaign_id: int, job: str | None = None) -> None:
    """Recompute and keep a campaign's quality verdicts for the staff pages."""
    from scoring.reports import verdicts

    _run_job(job, lambda: verdicts.refresh_verdicts(campaign_id))


# The quality pass reads every judgement twice: minutes at most even for a large campaign.
refresh_volunteer_verdicts = shared_task(
    name="scoring.reports.tasks.refresh_volunteer_verdicts",
    ignore_result=True,
    acks_late=True,
    soft_time_limit=600,
    time_limit=660,
)(_refresh_volunteer_verdicts)


def _refresh_worst_disagreements(campaign_id: int, config_id: int, limit: int, job: str | None = None) -> None:
    """Recompute and keep a large campaign's worst disagreements under one configuration."""
    from scoring.reports import pair_pages

    _run_job(job, lambda: pair_pages.refresh_worst_pairs(campaign_id, config_id, limit))


# Every score of the configuration and every corpus judgement: seconds for a million pairs.
refresh_worst_disagreements = shared_task(
    name="scoring.reports.tasks.refresh_worst_disagreements",
    ignore_result=True,
    acks_late=True,
    soft_time_limit=600,
    time_limit=660,
)(_refresh_worst_disagreements)

# The names these tasks had before they followed their module (``scoring.analysis_tasks.*``):
# messages queued by the previous release still arrive and run. Remove them in the release after 0.1.0.
FORMER_NAMES = {
    "scoring.analysis_tasks.compute_meta_evaluation": shared_task(
        name="scoring.analysis_tasks.compute_meta_evaluation", ignore_result=True, acks_late=True
    )(_compute_meta_evaluation),
    "scoring.analysis_tasks.compute_report_intervals": shared_task(
        name="scoring.analysis_tasks.compute_report_intervals", ignore_result=True, acks_late=True
    )(_compute_report_intervals),
}

# The check reads every counted judgement and the two metrics' scores once: seconds even for a
# large campaign. A hung database must not hold the interactive queue: a time limit, and the next
# judgement queues the check again.
STOPPING_TIME_LIMIT = 120


@shared_task(
    name="scoring.reports.tasks.check_settled",
    ignore_result=True,
    acks_late=True,
    soft_time_limit=STOPPING_TIME_LIMIT,
    time_limit=STOPPING_TIME_LIMIT + 30,
)
def check_settled(campaign_id: int) -> bool:
    """Record that the campaign's question is settled, and close it when its rule says so
    (:func:`scoring.reports.stopping.check_settled`: idempotent, a conditional UPDATE)."""
    from scoring.reports import stopping, stopping_queue

    stopping_queue.check_started(campaign_id)
    return stopping.check_settled(campaign_id)
