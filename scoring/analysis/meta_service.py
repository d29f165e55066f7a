"""The meta-evaluation of one campaign, computed on the ``cpu`` Celery queue and cached by data version.

:func:`meta_status` answers at once: the cached result when it matches the current data version
(see :mod:`scoring.analysis.service`), else "computing" after queueing
:func:`scoring.analysis_tasks.compute_meta_evaluation` once per version, and again when that
task was lost (:mod:`scoring.analysis.waits`). The dashboard and the
API poll it; ``evaluate_metrics`` calls :func:`compute` directly.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from scoring.analysis import dataset, waits
from scoring.analysis.dataset import FilterError, Filters
from scoring.analysis.meta import META_VERSION, MetaOptions, meta_evaluation
from scoring.analysis.report import ANALYSIS_VERSION
from scoring.analysis.service import _options, shared_cache

logger = logging.getLogger(__name__)

CACHE_SECONDS = 6 * 3600
WHAT = "The paired comparisons"


@dataclass(frozen=True)
class MetaStatus:
    """``state``: "ready" (``data`` holds the result), "computing" or "unavailable" (``message``)."""

    state: str
    version: str
    data: dict[str, Any] | None = None
    message: str = ""
    wait: dict[str, Any] | None = None  # while computing: the job's phase and attempt (:mod:`waits`)


def _meta_options(filters: Filters, resamples: int | None, seed: int | None) -> MetaOptions:
    checked = _options(filters, resamples, seed)  # the report's bounds on resamples
    return MetaOptions(
        reference=filters.reference,
        resamples=max(checked.resamples, 1),
        seed=checked.seed,
    )


def _slot(campaign_id: int, filters: Filters, options: MetaOptions) -> str:
    key = json.dumps([campaign_id, filters.as_dict(), options.resamples, options.seed])
    return "paraeval:meta:" + hashlib.sha256(key.encode()).hexdigest()[:24]


def _version(state: dataset.DataState, filters: Filters, options: MetaOptions) -> str:
    return state.version(ANALYSIS_VERSION, META_VERSION, filters.as_dict(), options.resamples, options.seed)


def compute(campaign_id: int, filters: Filters, options: MetaOptions, use_cache: bool = True) -> dict[str, Any]:
    """Compute (now, in this process) and cache the meta-evaluation; returns its JSON dict."""
    state = dataset.data_state(campaign_id, fresh=True)
    version = _version(state, filters, options)
    result = meta_evaluation(dataset.load(state.campaign, filters), options).as_dict()
    result.update({"version": version, "generated_at": timezone.now().isoformat(), "filters": filters.as_dict()})
    if use_cache:
        shared_cache().set(_slot(campaign_id, filters, options), result, CACHE_SECONDS)
    return result


def meta_status(
    campaign_id: int,
    *,
    reference: str = "volunteers",
    origin: str | None = None,
    english_level: str | None = None,
    date_from: datetime.date | None = None,
    date_to: datetime.date | None = None,
    exclude_flagged: bool = False,
    resamples: int | None = None,
    seed: int | None = None,
    enqueue: bool = True,
) -> MetaStatus:
    """The cached meta-evaluation, or "computing" after queueing it (once per data version).

    Raises ``Campaign.DoesNotExist`` and :class:`FilterError`.
    """
    filters = Filters.build(reference, origin, english_level, date_from, date_to, exclude_flagged)
    options = _meta_options(filters, resamples, seed)
    state = dataset.data_state(campaign_id)
    version = _version(state, filters, options)
    slot = _slot(campaign_id, filters, options)
    cached = shared_cache().get(slot)
    if cached is not None and cached.get("version") == version:
        return MetaStatus("ready", version, cached)
    if not enqueue:
        return MetaStatus("computing", version, message=f"{WHAT}: not queued (enqueue=False).")
    job = waits.job_key(slot, version)
    from scoring.analysis_tasks import compute_meta_evaluation

    arguments = {
        "campaign_id": campaign_id,
        "filters": filters.as_dict(),
        "resamples": options.resamples,
        "seed": options.seed,
        "job": job,
    }
    try:
        wait = waits.wait_for(job, WHAT, lambda: compute_meta_evaluation.apply_async(kwargs=arguments, queue="cpu"))
    except (BrokerError, OSError) as error:  # broker down: say so instead of spinning forever
        logger.warning("cannot queue the meta-evaluation of campaign %s: %s", campaign_id, error)
        return MetaStatus("unavailable", version, message=f"The task queue is unreachable ({type(error).__name__}).")
    cached = shared_cache().get(slot)  # an eager queue ran it
    if cached is not None and cached.get("version") == version:
        return MetaStatus("ready", version, cached)
    return MetaStatus("computing", version, message=wait.message, wait=wait.as_dict())


def filters_from_dict(values: dict[str, Any]) -> Filters:
    """Filters back from :meth:`Filters.as_dict` (a task's JSON arguments)."""
    return Filters.build(
        values.get("reference") or "volunteers",
        values.get("origin"),
        values.get("english_level"),
        datetime.date.fromisoformat(values["date_from"]) if values.get("date_from") else None,
        datetime.date.fromisoformat(values["date_to"]) if values.get("date_to") else None,
        bool(values.get("exclude_flagged", False)),
        values.get("pair_ids"),
    )


__all__ = ["FilterError", "MetaStatus", "compute", "filters_from_dict", "meta_status"]
