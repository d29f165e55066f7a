"""``campaign_report``: the agreement analyses of one campaign, cached by data version.

The dashboard's JSON endpoint, the REST API and ``manage.py evaluate_metrics`` all call
:func:`campaign_report`. Reading the data version costs one query; the report is recomputed
only when that version (or the filters) changed, so a page that polls an unchanged campaign
costs almost nothing.

The dashboard asks for ``deferred_intervals``: the point estimates at once (no bootstrap on the
request path) and the intervals from the ``cpu`` queue
(:func:`scoring.analysis_tasks.compute_report_intervals`), cached by data version like the
meta-evaluation; ``report["bootstrap"]["state"]`` says "computing" until they are in.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import json
import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from scoring.analysis import dataset, waits
from scoring.analysis.dataset import FilterError, Filters
from scoring.analysis.report import ANALYSIS_VERSION, Intervals, ReportOptions, apply_intervals, build_report
from scoring.analysis.tables import all_tables
from scoring.analysis.waits import Wait

__all__ = [
    "FilterError",
    "campaign_report",
    "campaign_version",
    "compute_intervals",
    "default_resamples",
    "default_seed",
    "report_etag",
    "report_etag_of",
    "shared_cache",
]

logger = logging.getLogger(__name__)

# How long a report may stay in the cache without being asked for (seconds).
CACHE_SECONDS = 6 * 3600
COMPUTING_MESSAGE = "The 95% bootstrap intervals"


def shared_cache() -> BaseCache:
    """Where reports, intervals and meta-evaluations are kept: the ``analyses`` cache, shared by
    the web processes and the cpu worker that fills it (Redis, or files in the data folder)."""
    return caches["analyses"]


def default_resamples() -> int:
    """Bootstrap resamples of a report (setting ``PARAEVAL_BOOTSTRAP_RESAMPLES``)."""
    return settings.PARAEVAL_BOOTSTRAP_RESAMPLES


def default_seed() -> int:
    """The seed of every resampling when none is asked for (setting ``PARAEVAL_SEED``): the same
    for the command line, the dashboard and the API."""
    return settings.PARAEVAL_SEED


def _options(filters: Filters, resamples: int | None, seed: int | None) -> ReportOptions:
    count = default_resamples() if resamples is None else resamples
    if count < 0:
        raise FilterError(f"resamples: must be 0 (no intervals) or more, got {count}")
    # Time and memory grow with the resamples: one request must not take a web worker down.
    if count > settings.PARAEVAL_MAX_RESAMPLES:
        raise FilterError(
            f"resamples: at most {settings.PARAEVAL_MAX_RESAMPLES} resamples (PARAEVAL_MAX_RESAMPLES), got {count}"
        )
    return ReportOptions(reference=filters.reference, resamples=count, seed=default_seed() if seed is None else seed)


def _version(state: dataset.DataState, filters: Filters, options: ReportOptions) -> str:
    return state.version(ANALYSIS_VERSION, filters.as_dict(), options.resamples, options.seed, options.confidence)


def _slot(kind: str, campaign_id: int, filters: Filters, options: ReportOptions) -> str:
    """One cache entry per campaign, filters and kind, holding the latest version only: an old
    result is replaced, not piled up."""
    key = json.dumps([campaign_id, filters.as_dict(), options.resamples, options.seed])
    return f"paraeval:{kind}:" + hashlib.sha256(key.encode()).hexdigest()[:24]


def campaign_version(
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
) -> str:
    """The version string :func:`campaign_report` would return now, for one query.

    Raises ``Campaign.DoesNotExist`` for an unknown campaign and :class:`FilterError` for a
    bad filter.
    """
    filters = Filters.build(reference, origin, english_level, date_from, date_to, exclude_flagged)
    return _version(dataset.data_state(campaign_id), filters, _options(filters, resamples, seed))


def report_etag(
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
) -> str:
    """The dashboard's ETag: the data version and whether the intervals are in (one query and
    two cache reads). While they are not, makes sure they are queued, so a page that only gets
    ``304`` answers still sees them arrive."""
    filters = Filters.build(reference, origin, english_level, date_from, date_to, exclude_flagged)
    options = _options(filters, resamples, seed)
    version = _version(dataset.data_state(campaign_id), filters, options)
    ready = options.resamples == 0 or _cached_intervals(campaign_id, filters, options, version) is not None
    wait = None if ready else _queue_intervals(campaign_id, filters, options, version)
    return _etag(version, wait)


def _etag(version: str, wait: Wait | None) -> str:
    # While waiting, the wait's phase and attempt are part of it: the page gets the new message.
    return f'"{version}-{"i" if wait is None else f"p{wait.phase}{wait.attempt}"}"'


def report_etag_of(report: dict[str, Any]) -> str:
    """The ETag of a report :func:`campaign_report` returned (its own version and intervals)."""
    bootstrap = report["bootstrap"]
    if bootstrap.get("state") in ("ready", "off"):
        return _etag(report["version"], None)
    wait = bootstrap.get("wait") or {"phase": bootstrap.get("state"), "attempt": 0}
    return _etag(report["version"], Wait(wait["phase"], wait["attempt"], ""))


def _cached_intervals(campaign_id: int, filters: Filters, options: ReportOptions, version: str) -> Intervals | None:
    cached = shared_cache().get(_slot("intervals", campaign_id, filters, options))
    if cached is not None and cached.get("version") == version:
        intervals: Intervals = cached["intervals"]
        return intervals
    return None


def _queue_intervals(campaign_id: int, filters: Filters, options: ReportOptions, version: str) -> Wait:
    """Queue the intervals once per version, and again when that task was lost (:mod:`waits`)."""
    job = waits.job_key(_slot("intervals", campaign_id, filters, options), version)
    from scoring.analysis_tasks import compute_report_intervals

    arguments = {
        "campaign_id": campaign_id,
        "filters": filters.as_dict(),
        "resamples": options.resamples,
        "seed": options.seed,
        "job": job,
    }
    try:
        return waits.wait_for(
            job, COMPUTING_MESSAGE, lambda: compute_report_intervals.apply_async(kwargs=arguments, queue="cpu")
        )
    except (BrokerError, OSError) as error:  # broker down: say so instead of spinning forever
        logger.warning("cannot queue the intervals of campaign %s: %s", campaign_id, error)
        message = f"The task queue is unreachable ({type(error).__name__}): no intervals for now."
        return waits.Wait("unavailable", 0, message)


def compute_intervals(campaign_id: int, filters: Filters, resamples: int, seed: int) -> str:
    """Compute (now, in this process) and cache the report's bootstrap intervals; their version.

    What the ``cpu`` worker runs for the dashboard. Raises ``Campaign.DoesNotExist``.
    """
    from scoring.analysis.report import report_intervals

    options = _options(filters, resamples, seed)
    state = dataset.data_state(campaign_id, fresh=True)
    version = _version(state, filters, options)
    intervals = report_intervals(dataset.load(state.campaign, filters), options)
    shared_cache().set(
        _slot("intervals", campaign_id, filters, options), {"version": version, "intervals": intervals}, CACHE_SECONDS
    )
    return version


def campaign_report(
    campaign_id: int,
    *,
    reference: str = "volunteers",
    origin: str | None = None,
    english_level: str | None = None,
    date_from: datetime.date | None = None,
    date_to: datetime.date | None = None,
    exclude_flagged: bool = False,
    pair_ids: Iterable[int] | None = None,
    resamples: int | None = None,
    seed: int | None = None,
    use_cache: bool = True,
    deferred_intervals: bool = False,
) -> dict[str, Any]:
    """Every agreement analysis of one campaign as a JSON-serialisable dict.

    ``reference``: "volunteers" (majority of the campaign judgements) or "gold" (imported
    ``Pair.gold_label``). ``origin`` keeps one corpus; ``english_level`` and the dates keep
    the judgements of volunteers with that level, answered between those days (inclusive);
    ``exclude_flagged`` leaves out the volunteers the campaign's quality rule excludes;
    ``pair_ids`` keeps those pairs only (with the other filters).
    ``resamples``: bootstrap resamples (default ``PARAEVAL_BOOTSTRAP_RESAMPLES``, 0 = no
    intervals); ``seed`` fixes them. ``deferred_intervals``: do not bootstrap here; take the
    intervals from the cache when the ``cpu`` queue has computed them, else queue them and
    answer with ``bootstrap.state`` "computing" (intervals None).

    Keys: ``campaign``, ``filters``, ``version`` (changes whenever the data or the filters
    change), ``last_changed``, ``generated_at``, ``counts`` (pairs, labels, judgements,
    scores done / failed / missing), ``subsets`` (corpora), ``metrics``, ``results`` (per
    metric id, per subset: every statistic), ``tables`` (the paper's tables, ready to
    display), ``charts``, ``agreement``, ``volunteers`` and ``bootstrap`` (with ``state``:
    "ready", "off", "computing" or "unavailable", and ``message``).

    Raises ``Campaign.DoesNotExist`` and :class:`FilterError` (a ``ValueError`` naming the
    filter).
    """
    filters = Filters.build(reference, origin, english_level, date_from, date_to, exclude_flagged, pair_ids)
    options = _options(filters, resamples, seed)
    state = dataset.data_state(campaign_id)
    version = _version(state, filters, options)
    slot = _slot("report", campaign_id, filters, options)
    if use_cache:
        cached = shared_cache().get(slot)
        if cached is not None and cached.get("version") == version:
            return cached
    if not deferred_intervals or options.resamples == 0:
        report = _report(state, filters, options, version)
        if use_cache:
            shared_cache().set(slot, report, CACHE_SECONDS)
        return report

    points_slot = _slot("points", campaign_id, filters, options)
    points = shared_cache().get(points_slot)
    if points is None or points.get("version") != version:
        points = _report(state, filters, replace(options, intervals=False), version)
        shared_cache().set(points_slot, points, CACHE_SECONDS)
    intervals = _cached_intervals(campaign_id, filters, options, version)
    if intervals is None:
        wait = _queue_intervals(campaign_id, filters, options, version)
        intervals = _cached_intervals(campaign_id, filters, options, version)  # an eager queue ran it
        if intervals is None:
            waiting = copy.copy(points)
            waiting["bootstrap"] = {
                **points["bootstrap"],
                "state": "unavailable" if wait.phase == "unavailable" else "computing",
                "message": wait.message,
                "wait": wait.as_dict(),
            }
            return waiting
    # The points and the intervals make the same report as a synchronous computation: keep it.
    report = copy.deepcopy(points)
    apply_intervals(report, intervals)
    report["bootstrap"] = {**report["bootstrap"], "state": "ready", "message": ""}
    report["tables"] = [table.as_dict() for table in all_tables(report)]
    shared_cache().set(slot, report, CACHE_SECONDS)
    return report


def _report(state: dataset.DataState, filters: Filters, options: ReportOptions, version: str) -> dict[str, Any]:
    report = build_report(dataset.load(state.campaign, filters), options)
    campaign = state.campaign
    report.update(
        {
            "campaign": {"id": campaign.pk, "slug": campaign.slug, "name": campaign.name},
            "filters": filters.as_dict(),
            "version": version,
            "last_changed": state.last_changed.isoformat() if state.last_changed else None,
            "generated_at": timezone.now().isoformat(),
            "tables": [table.as_dict() for table in all_tables(report)],
        }
    )
    return report
