"""Celery tasks of the analyses on the ``cpu`` queue, off the request path: the meta-evaluation
(paired tests etc.) and the dashboard report's bootstrap intervals.

Safe to run twice: each recomputes and overwrites the same cache slot for the current version.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from annotate.models import Campaign
from scoring.analysis import waits


@shared_task(name="scoring.analysis_tasks.compute_meta_evaluation", ignore_result=True, acks_late=True)
def compute_meta_evaluation(
    campaign_id: int, filters: dict[str, Any], resamples: int, seed: int, job: str | None = None
) -> str | None:
    """Compute and cache the meta-evaluation of ``campaign_id`` under ``filters``; its version.

    ``job``: the wait record the polling page reads (:mod:`scoring.analysis.waits`)."""
    from scoring.analysis.meta import MetaOptions
    from scoring.analysis.meta_service import compute, filters_from_dict

    if not waits.started(job):
        return None  # a copy queued again already delivered
    checked = filters_from_dict(filters)
    try:
        result = compute(campaign_id, checked, MetaOptions(reference=checked.reference, resamples=resamples, seed=seed))
    except Campaign.DoesNotExist:
        return None  # deleted meanwhile: nothing to do
    waits.finished(job)
    return str(result["version"])


@shared_task(name="scoring.analysis_tasks.compute_report_intervals", ignore_result=True, acks_late=True)
def compute_report_intervals(
    campaign_id: int, filters: dict[str, Any], resamples: int, seed: int, job: str | None = None
) -> str | None:
    """Compute and cache the bootstrap intervals of the report of ``campaign_id``; their version."""
    from scoring.analysis.meta_service import filters_from_dict
    from scoring.analysis.service import compute_intervals

    if not waits.started(job):
        return None  # a copy queued again already delivered
    try:
        version = compute_intervals(campaign_id, filters_from_dict(filters), resamples, seed)
    except Campaign.DoesNotExist:
        return None  # deleted meanwhile: nothing to do
    waits.finished(job)
    return version
