"""The analyses of one campaign as the pages, the API and the command line get them, cached by data version.

Two results, one module:

- :func:`campaign_report`: the report (the paper's tables, charts, agreement), a typed
  :class:`CampaignReport`. Reading the data version costs one query; the report is recomputed
  only when that version (or the filters) changed, so a page that polls an unchanged campaign
  costs almost nothing. The dashboard asks for ``deferred_intervals``: the point estimates at
  once (no bootstrap on the request path) and the intervals from the ``interactive`` queue, whose
  ``bootstrap.state`` says "computing" until they are in.
- :func:`meta_status`: the meta-evaluation (paired tests, clusters, systems, ceiling...), a
  typed :class:`MetaResult` computed on the ``interactive`` queue only: "ready" when the cache holds it
  for the current data version, else "computing" after queueing it.

Both computations are queued once per data version, and again when the task was lost
(:mod:`scoring.reports.waits`). The tasks (:mod:`scoring.reports.tasks`) call
:func:`compute_intervals` and :func:`compute_meta` here; this module sends them *by name*
and never imports them, so the dependencies go one way: tasks -> service -> statistics (an
import-linter contract in ``pyproject.toml`` checks it).

The typed results are what the cache keeps and what Python reads by attribute; ``as_json()``
is their one JSON form, for the dashboard and the API.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from paraeval import broker
from paraeval.celery import app
from scoring.analysis.meta import META_VERSION, MetaEvaluation, MetaOptions, meta_evaluation
from scoring.analysis.plain import to_json
from scoring.analysis.report import (
    ANALYSIS_VERSION,
    BootstrapInfo,
    Intervals,
    Report,
    ReportOptions,
    WaitState,
    build_report,
    report_intervals,
    report_json,
    with_intervals,
)
from scoring.reports import dataset, waits
from scoring.reports.dataset import FilterError, Filters
from scoring.reports.failures import failures_json
from scoring.reports.stopping import stopping_json
from scoring.reports.tables import Table, all_tables
from scoring.reports.waits import Wait

__all__ = [
    "CampaignReport",
    "FilterError",
    "MetaResult",
    "MetaStatus",
    "campaign_report",
    "campaign_version",
    "compute_intervals",
    "compute_meta",
    "compute_points",
    "dashboard_content",
    "dashboard_report",
    "default_resamples",
    "default_seed",
    "is_large",
    "keep_body",
    "meta_options",
    "meta_status",
    "report_etag",
    "report_etag_of",
    "shared_cache",
]

# The default of every report: every pair, the volunteers' majority, nothing filtered out.
ALL_PAIRS = Filters()

logger = logging.getLogger(__name__)

# How long a result may stay in the cache without being asked for (seconds).
CACHE_SECONDS = 6 * 3600
INTERVALS_WHAT = "The 95% bootstrap intervals"
REPORT_WHAT = "The report"
META_WHAT = "The paired comparisons"
# The interactive-queue tasks, sent by name (scoring/reports/tasks.py defines them).
INTERVALS_TASK = "scoring.reports.tasks.compute_report_intervals"
META_TASK = "scoring.reports.tasks.compute_meta_evaluation"
REPORT_TASK = "scoring.reports.tasks.compute_dashboard_report"


def shared_cache() -> BaseCache:
    """Where reports, intervals and meta-evaluations are kept: the ``analyses`` cache, shared by
    the web processes and the interactive worker that fills it (Redis, or files in the data folder)."""
    return caches["analyses"]


def default_resamples() -> int:
    """Bootstrap resamples of a report (setting ``PARAEVAL_BOOTSTRAP_RESAMPLES``)."""
    return settings.PARAEVAL_BOOTSTRAP_RESAMPLES


def default_seed() -> int:
    """The seed of every resampling when none is asked for (setting ``PARAEVAL_SEED``): the same
    for the command line, the dashboard and the API."""
    return settings.PARAEVAL_SEED


# --- the typed results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CampaignRef:
    id: int
    slug: str
    name: str


@dataclass(frozen=True)
class CampaignReport:
    """The report of one campaign under ``filters``, at data ``version``, with its tables."""

    report: Report
    campaign: CampaignRef
    filters: Filters
    version: str  # changes whenever the data or the filters change
    last_changed: str | None  # ISO time of the campaign's last change
    generated_at: str
    tables: list[Table] = field(default_factory=list)
    # Empty when the analyses cache answered; else why this report was computed now.
    cache_unavailable: str = ""

    def as_json(self) -> dict[str, Any]:
        """What the dashboard and the API read: the report's sections, the campaign, the
        filters, the version, the tables ready to display, and whether the cache answered."""
        return {
            **report_json(self.report),
            "campaign": {"id": self.campaign.id, "slug": self.campaign.slug, "name": self.campaign.name},
            "filters": self.filters.as_dict(),
            "version": self.version,
            "last_changed": self.last_changed,
            "generated_at": self.generated_at,
            "tables": [table.as_dict() for table in self.tables],
            "cache": {
                "state": "unavailable" if self.cache_unavailable else "available",
                "message": self.cache_unavailable,
            },
        }


@dataclass(frozen=True)
class CachedIntervals:
    version: str
    intervals: Intervals


@dataclass(frozen=True)
class MetaResult:
    """The meta-evaluation of one campaign under ``filters``, at data ``version``."""

    evaluation: MetaEvaluation
    filters: Filters
    version: str
    generated_at: str

    def as_json(self) -> dict[str, Any]:
        return {
            **self.evaluation.as_dict(),
            "version": self.version,
            "generated_at": self.generated_at,
            "filters": self.filters.as_dict(),
        }


@dataclass(frozen=True)
class MetaStatus:
    """``state``: "ready" (``result`` holds it), "computing" or "unavailable" (``message``)."""

    state: str
    version: str
    result: MetaResult | None = None
    message: str = ""
    wait: Wait | None = None  # while computing: the job's phase and attempt (:mod:`waits`)


class _Analyses:
    """The shared cache as one call sees it: a read or write that fails is a miss, remembered.

    While Redis is down every cache call raises; the report must still be served (computed
    now) and say so, so a failure is caught here, logged once, and later calls of the same
    request do not wait on the dead server again.
    """

    def __init__(self) -> None:
        self.failure = ""  # the error's name once a call failed

    def get(self, slot: str, kind: type, version: str) -> Any:
        """The entry of ``slot`` when it is a ``kind`` for ``version`` (an entry of another
        version, or of an older release's layout, is no hit); None when the cache failed."""
        if self.failure:
            return None
        try:
            cached = shared_cache().get(slot)
        except Exception as error:  # noqa: BLE001 - any cache failure (Redis down, disk full) is a miss, logged
            self._failed(error)
            return None
        if isinstance(cached, kind) and getattr(cached, "version", None) == version:
            return cached
        return None

    def set(self, slot: str, value: Any) -> None:
        if self.failure:
            return
        try:
            shared_cache().set(slot, value, CACHE_SECONDS)
        except Exception as error:  # noqa: BLE001 - the result is served anyway, the failure logged
            self._failed(error)

    def _failed(self, error: Exception) -> None:
        logger.warning("the analyses cache failed (%s: %s): computing without it", type(error).__name__, error)
        self.failure = type(error).__name__

    def report_notice(self) -> str:
        """What a report computed without the cache says about it (empty when the cache answered)."""
        if not self.failure:
            return ""
        return f"The analyses cache is unavailable ({self.failure}): this report was computed now and not kept."

    def intervals_notice(self) -> str:
        return (
            f"The analyses cache is unavailable ({self.failure}): the report was computed now, without "
            "the 95% intervals (the cpu queue keeps them there); they come back with the cache."
        )


def _send(task: str, arguments: dict[str, Any]) -> None:
    app.send_task(task, kwargs=arguments, queue=broker.INTERACTIVE_QUEUE)


# --- options, versions, cache slots --------------------------------------------------------------


def _options(filters: Filters, resamples: int | None, seed: int | None, two_way: bool = True) -> ReportOptions:
    count = default_resamples() if resamples is None else resamples
    if count < 0:
        raise FilterError(f"resamples: must be 0 (no intervals) or more, got {count}")
    # Time and memory grow with the resamples: one request must not take a web worker down.
    if count > settings.PARAEVAL_MAX_RESAMPLES:
        raise FilterError(
            f"resamples: at most {settings.PARAEVAL_MAX_RESAMPLES} resamples (PARAEVAL_MAX_RESAMPLES), got {count}"
        )
    return ReportOptions(
        reference=filters.reference,
        resamples=count,
        seed=default_seed() if seed is None else seed,
        two_way=two_way and count > 0,  # without resamples there is no interval of either kind
    )


def meta_options(filters: Filters, resamples: int | None, seed: int | None) -> MetaOptions:
    """The meta-evaluation's options: the report's bounds on resamples (at least one), its seed."""
    checked = _options(filters, resamples, seed)
    return MetaOptions(reference=filters.reference, resamples=max(checked.resamples, 1), seed=checked.seed)


def _version(state: dataset.DataState, filters: Filters, options: ReportOptions) -> str:
    return state.version(
        ANALYSIS_VERSION, filters.as_dict(), options.resamples, options.seed, options.confidence, options.two_way
    )


def meta_version(state: dataset.DataState, filters: Filters, options: MetaOptions) -> str:
    return state.version(ANALYSIS_VERSION, META_VERSION, filters.as_dict(), options.resamples, options.seed)


def _slot(kind: str, campaign_id: int, filters: Filters, resamples: int, seed: int) -> str:
    """One cache entry per campaign, filters and kind, holding the latest version only: an old
    result is replaced, not piled up."""
    key = json.dumps([campaign_id, filters.as_dict(), resamples, seed])
    return f"paraeval:{kind}:" + hashlib.sha256(key.encode()).hexdigest()[:24]


def _report_slot(kind: str, campaign_id: int, filters: Filters, options: ReportOptions) -> str:
    return _slot(
        kind if options.two_way else f"{kind}-pairs-only", campaign_id, filters, options.resamples, options.seed
    )


def _meta_slot(campaign_id: int, filters: Filters, options: MetaOptions) -> str:
    return _slot("meta", campaign_id, filters, options.resamples, options.seed)


def _arguments(campaign_id: int, filters: Filters, resamples: int, seed: int, job: str) -> dict[str, Any]:
    """A task's JSON arguments."""
    return {"campaign_id": campaign_id, "filters": filters.as_dict(), "resamples": resamples, "seed": seed, "job": job}


# --- the report ----------------------------------------------------------------------------------


def campaign_version(
    campaign_id: int,
    *,
    filters: Filters = ALL_PAIRS,
    resamples: int | None = None,
    seed: int | None = None,
) -> str:
    """The version string :func:`campaign_report` would return now, for one query.

    Raises ``Campaign.DoesNotExist`` for an unknown campaign and :class:`FilterError` for a
    bad filter.
    """
    return _version(dataset.data_state(campaign_id), filters, _options(filters, resamples, seed))


def report_etag(
    campaign_id: int,
    *,
    filters: Filters = ALL_PAIRS,
    resamples: int | None = None,
    seed: int | None = None,
) -> str:
    """The dashboard's ETag: the data version and whether the intervals are in (one query and
    two cache reads). While they are not, makes sure they are queued, so a page that only gets
    ``304`` answers still sees them arrive."""
    options = _options(filters, resamples, seed)
    version = _version(dataset.data_state(campaign_id), filters, options)
    return _report_etag(_Analyses(), campaign_id, filters, options, version)


def _report_etag(analyses: _Analyses, campaign_id: int, filters: Filters, options: ReportOptions, version: str) -> str:
    return _etag(version, _intervals_wait(analyses, campaign_id, filters, options, version))


def _intervals_wait(
    analyses: _Analyses, campaign_id: int, filters: Filters, options: ReportOptions, version: str
) -> Wait | None:
    """None when the intervals are in (or off); else where their job stands, queued when it is not."""
    ready = options.resamples == 0 or _cached_intervals(analyses, campaign_id, filters, options, version) is not None
    if ready:
        return None
    if analyses.failure:  # the same tag as the report computed without the cache
        return Wait("unavailable", 0, "")
    return _queue_intervals(campaign_id, filters, options, version)


def _etag(version: str, wait: Wait | None) -> str:
    # While waiting, the wait's phase and attempt are part of it: the page gets the new message.
    return f'"{version}-{"i" if wait is None else f"p{wait.phase}{wait.attempt}"}"'


def report_etag_of(result: CampaignReport) -> str:
    """The ETag of a report :func:`campaign_report` returned (its own version and intervals)."""
    bootstrap = result.report.bootstrap
    if bootstrap.state in ("ready", "off"):
        return _etag(result.version, None)
    wait = bootstrap.wait or WaitState(bootstrap.state, 0)
    return _etag(result.version, Wait(wait.phase, wait.attempt, ""))


def _cached_intervals(
    analyses: _Analyses, campaign_id: int, filters: Filters, options: ReportOptions, version: str
) -> Intervals | None:
    cached = analyses.get(_report_slot("intervals", campaign_id, filters, options), CachedIntervals, version)
    return None if cached is None else cached.intervals


def _queue_intervals(campaign_id: int, filters: Filters, options: ReportOptions, version: str) -> Wait:
    """Queue the intervals once per version, and again when that task was lost (:mod:`waits`)."""
    job = waits.job_key(_report_slot("intervals", campaign_id, filters, options), version)
    arguments = _arguments(campaign_id, filters, options.resamples, options.seed, job)
    try:
        return waits.wait_for(job, INTERVALS_WHAT, lambda: _send(INTERVALS_TASK, arguments))
    except (BrokerError, OSError) as error:  # broker down: say so instead of spinning forever
        logger.warning("cannot queue the intervals of campaign %s: %s", campaign_id, error)
        message = f"The task queue is unreachable ({type(error).__name__}): no intervals for now."
        return waits.Wait("unavailable", 0, message)


def compute_intervals(campaign_id: int, filters: Filters, resamples: int, seed: int) -> str:
    """Compute (now, in this process) and cache the report's bootstrap intervals; their version.

    What the ``interactive`` worker runs for the dashboard. When that worker also computed the
    report's points (a large campaign), it keeps the whole report and the dashboard's answer too
    (:func:`keep_body`). Raises ``Campaign.DoesNotExist``.
    """
    options = _options(filters, resamples, seed)
    state = dataset.data_state(campaign_id)
    version = _version(state, filters, options)
    intervals = report_intervals(dataset.load(state.campaign, filters), options)
    shared_cache().set(
        _report_slot("intervals", campaign_id, filters, options), CachedIntervals(version, intervals), CACHE_SECONDS
    )
    analyses = _Analyses()
    if _computed_version(analyses, campaign_id, filters, options) == version:
        # The dashboard's report of a large campaign: this worker computed its points, and builds
        # its answer too, so that the poll that picks it up only sends bytes.
        points = analyses.get(_report_slot("points", campaign_id, filters, options), CampaignReport, version)
        if points is not None:
            result = _with_intervals(points, intervals)
            analyses.set(_report_slot("report", campaign_id, filters, options), result)
            _keep_answer(analyses, state.campaign, result, options)
    return version


def campaign_report(
    campaign_id: int,
    *,
    filters: Filters = ALL_PAIRS,
    resamples: int | None = None,
    seed: int | None = None,
    use_cache: bool = True,
    deferred_intervals: bool = False,
    two_way: bool = True,
) -> CampaignReport:
    """Every agreement analysis of one campaign (:class:`CampaignReport`; ``as_json()`` for the
    page and the API).

    ``filters`` (checked by :meth:`Filters.build`, which names a bad one): the reference
    ("volunteers", the majority of the campaign judgements, or "gold", the imported
    ``Pair.gold_label``), one corpus, the judgements of volunteers of one English level answered
    between two days (inclusive), without the volunteers the quality rule excludes, some pairs only.
    ``resamples``: bootstrap resamples (default ``PARAEVAL_BOOTSTRAP_RESAMPLES``, 0 = no
    intervals); ``seed`` fixes them. ``deferred_intervals``: do not bootstrap here; take the
    intervals from the cache when the ``interactive`` queue has computed them, else queue them and
    answer with ``report.bootstrap.state`` "computing" (intervals None). ``two_way`` False: leave
    out the two-way (pairs and volunteers) intervals, several times the cost of the pairs-only ones
    (the report API's default; the deferred intervals always have them).

    While the analyses cache fails (Redis down) the report is computed now, and its
    ``cache_unavailable`` says so; deferred intervals are then "unavailable" (the ``cpu``
    queue hands them over through that cache).

    Raises ``Campaign.DoesNotExist`` and :class:`FilterError` (a ``ValueError`` naming the
    filter).
    """
    options = _options(filters, resamples, seed, two_way=two_way or deferred_intervals)
    state = dataset.data_state(campaign_id)
    version = _version(state, filters, options)
    slot = _report_slot("report", campaign_id, filters, options)
    analyses = _Analyses()
    if use_cache:
        cached: CampaignReport | None = analyses.get(slot, CampaignReport, version)
        if cached is not None:
            return cached
    if not deferred_intervals or options.resamples == 0:
        result = _campaign_report(state, filters, options, version)
        if use_cache:
            analyses.set(slot, result)
        return replace(result, cache_unavailable=analyses.report_notice())

    points_slot = _report_slot("points", campaign_id, filters, options)
    points: CampaignReport | None = analyses.get(points_slot, CampaignReport, version)
    if points is None:
        points = _campaign_report(state, filters, replace(options, intervals=False), version)
        analyses.set(points_slot, points)
    if analyses.failure:
        bootstrap = replace(
            points.report.bootstrap,
            state="unavailable",
            message=analyses.intervals_notice(),
            wait=WaitState("unavailable", 0),
        )
        report = replace(points.report, bootstrap=bootstrap)
        return replace(points, report=report, cache_unavailable=analyses.report_notice())
    intervals = _cached_intervals(analyses, campaign_id, filters, options, version)
    if intervals is None:
        wait = _queue_intervals(campaign_id, filters, options, version)
        intervals = _cached_intervals(analyses, campaign_id, filters, options, version)  # computed meanwhile
        if intervals is None:
            return replace(points, report=replace(points.report, bootstrap=_waiting(points.report.bootstrap, wait)))
    result = _with_intervals(points, intervals)
    analyses.set(slot, result)
    return result


def _waiting(bootstrap: BootstrapInfo, wait: Wait) -> BootstrapInfo:
    """The bootstrap section of a report whose intervals are computed elsewhere, saying where."""
    return replace(
        bootstrap,
        state="unavailable" if wait.phase == "unavailable" else "computing",
        message=wait.message,
        wait=WaitState(wait.phase, wait.attempt),
    )


def _with_intervals(points: CampaignReport, intervals: Intervals) -> CampaignReport:
    """The points and the intervals make the same report as a synchronous computation."""
    report = with_intervals(points.report, intervals)
    report = replace(report, bootstrap=replace(report.bootstrap, state="ready", message=""))
    return replace(points, report=report, tables=all_tables(report))


def _campaign_report(
    state: dataset.DataState, filters: Filters, options: ReportOptions, version: str
) -> CampaignReport:
    report = build_report(dataset.load(state.campaign, filters), options)
    campaign = state.campaign
    return CampaignReport(
        report=report,
        campaign=CampaignRef(campaign.pk, campaign.slug, campaign.name),
        filters=filters,
        version=version,
        last_changed=state.last_changed.isoformat() if state.last_changed else None,
        generated_at=timezone.now().isoformat(),
        tables=all_tables(report),
    )


# --- the dashboard's report, computed off the request path for a large campaign -----------------


@dataclass(frozen=True)
class DashboardReport:
    """What the dashboard's poll answers.

    ``state``: "live" (``report`` is for the current data), "stale" (``report`` is the last one
    kept, for older data, while the current one is computed on the ``interactive`` queue),
    "computing" (none kept yet) or "unavailable" (none kept, and the queue or the cache cannot
    compute one now). ``message`` says it in words; ``etag`` changes with each of them."""

    state: str
    message: str
    version: str
    etag: str
    report: CampaignReport | None = None  # a report computed for this answer
    body: KeptBody | None = None  # else the kept answer sent (its report's JSON)
    not_modified: bool = False  # the poll's tag is current: nothing was read


def inline_pairs() -> int:
    """Campaigns of at most this many pairs get their dashboard report in the request
    (setting ``PARAEVAL_DASHBOARD_INLINE_PAIRS``)."""
    return int(settings.PARAEVAL_DASHBOARD_INLINE_PAIRS)


# How long the answer of :func:`_is_large` is kept: a campaign grows past the bound by an import,
# and computing a large one in the request a few more minutes is slow, not wrong.
LARGE_SECONDS = 300


def _is_large(campaign: Any) -> bool:
    """More pairs than :func:`inline_pairs`: a count that stops at the bound (an index range),
    kept a few minutes in the default cache so that an unchanged poll does not repeat it."""
    from django.core.cache import cache

    from annotate.models import Pair

    bound = inline_pairs()
    key = f"paraeval:dashboard-large:{campaign.pk}:{bound}"
    try:
        known = cache.get(key)
    except Exception:  # noqa: BLE001 - without the cache, count
        known = None
    if isinstance(known, bool):
        return known
    large = Pair.objects.filter(campaign=campaign)[: bound + 1].count() > bound
    try:
        cache.set(key, large, LARGE_SECONDS)
    except Exception:  # noqa: BLE001 - counted again next time
        logger.debug("cannot keep whether campaign %s is large", campaign.pk)
    return large


def is_large(campaign: Any) -> bool:
    """Whether the campaign has more pairs than :func:`inline_pairs`: its analyses are computed
    on the ``interactive`` queue, not in a request (kept a few minutes)."""
    return _is_large(campaign)


def compute_points(campaign_id: int, filters: Filters, resamples: int, seed: int) -> str:
    """Compute (now, in this process) and keep the dashboard's report without its intervals (with
    them off, the whole report) and the answer the polls send for it; its version. What the
    ``interactive`` worker runs for a large campaign. Raises ``Campaign.DoesNotExist``."""
    options = _options(filters, resamples, seed)
    state = dataset.data_state(campaign_id)
    version = _version(state, filters, options)
    kind = "points" if options.resamples else "report"
    result = _campaign_report(
        state, filters, replace(options, intervals=False) if options.resamples else options, version
    )
    shared_cache().set(_report_slot(kind, campaign_id, filters, options), result, CACHE_SECONDS)
    # The poll's answer, built here rather than in the request: whole when there are no intervals
    # to wait for, else around the bootstrap section that each poll writes (:class:`PendingBody`).
    analyses = _Analyses()
    if options.resamples:
        analyses.set(_report_slot("pending-body", campaign_id, filters, options), _pending_body(state.campaign, result))
    else:
        _keep_answer(analyses, state.campaign, result, options)
    # A short mark the polls read instead of the report itself.
    shared_cache().set(_report_slot("computed", campaign_id, filters, options), version, CACHE_SECONDS)
    return version


def _queue_report(campaign_id: int, filters: Filters, options: ReportOptions, version: str) -> Wait:
    """Queue the report once per version, and again when that task was lost (:mod:`waits`)."""
    job = waits.job_key(_report_slot("points", campaign_id, filters, options), version)
    arguments = _arguments(campaign_id, filters, options.resamples, options.seed, job)
    try:
        return waits.wait_for(job, REPORT_WHAT, lambda: _send(REPORT_TASK, arguments))
    except (BrokerError, OSError) as error:  # broker down: say so instead of spinning forever
        logger.warning("cannot queue the report of campaign %s: %s", campaign_id, error)
        return Wait("unavailable", 0, f"The task queue is unreachable ({type(error).__name__}): no new report for now.")


@dataclass(frozen=True)
class KeptBody:
    """The dashboard's last live answer for one campaign and filters, as JSON bytes (without its
    ``report_status``), with the data ``version``, ``etag`` and ``generated_at`` of its report:
    a repeat view sends it as it is, whatever the campaign's size."""

    version: str
    etag: str
    generated_at: str
    content: bytes


def keep_body(campaign_id: int, filters: Filters, body: KeptBody) -> None:
    """Keep the dashboard's answer (only one whose intervals are in: it no longer changes)."""
    _Analyses().set(_report_slot("body", campaign_id, filters, _options(filters, None, None)), body)


def _encode(value: Any) -> bytes:
    return json.dumps(value, cls=DjangoJSONEncoder).encode()


def _dashboard_json(campaign: Any, result: CampaignReport) -> dict[str, Any]:
    # The failed scores are redrawn with the report (a new failure changes the version).
    return {**result.as_json(), "failures": failures_json(campaign), "stopping": stopping_json(campaign)}


def dashboard_content(campaign: Any, result: CampaignReport) -> bytes:
    """The dashboard's answer for ``result`` as JSON bytes (without its ``report_status``): the
    report, the campaign's failed scores and its stopping rule. The one encoding of it, whether
    a request or the ``interactive`` worker builds it."""
    return _encode(_dashboard_json(campaign, result))


def _keep_answer(analyses: _Analyses, campaign: Any, result: CampaignReport, options: ReportOptions) -> None:
    """Keep the answer of a report whose intervals are in (or off), as the dashboard's view does."""
    body = KeptBody(
        result.version, _etag(result.version, None), result.generated_at, dashboard_content(campaign, result)
    )
    analyses.set(_report_slot("body", campaign.pk, result.filters, options), body)


# Stands for the bootstrap section in a :class:`PendingBody` while it is encoded (a string no
# report holds), so that the bytes around it are split at its JSON.
_BOOTSTRAP_MARK = "\x00paraeval:bootstrap\x00"


@dataclass(frozen=True)
class PendingBody:
    """The dashboard's answer for a report of a large campaign whose intervals are still computed:
    the JSON bytes ``before`` and ``after`` its ``bootstrap`` section, and that section, which each
    poll completes with where the intervals' job stands (its phase and message change between
    polls). Built by the ``interactive`` worker with the report: the poll that picks it up encodes
    only the bootstrap section (a few hundred bytes), the same bytes as :func:`dashboard_content`."""

    version: str
    generated_at: str
    bootstrap: BootstrapInfo
    before: bytes
    after: bytes

    def content(self, wait: Wait) -> bytes:
        return self.before + _encode(to_json(_waiting(self.bootstrap, wait))) + self.after


def _pending_body(campaign: Any, result: CampaignReport) -> PendingBody:
    data = _dashboard_json(campaign, result)
    data["bootstrap"] = _BOOTSTRAP_MARK
    before, after = _encode(data).split(_encode(_BOOTSTRAP_MARK))
    return PendingBody(result.version, result.generated_at, result.report.bootstrap, before, after)


def _kept_body(analyses: _Analyses, campaign_id: int, filters: Filters, options: ReportOptions) -> KeptBody | None:
    """The last answer kept for these filters, whatever its data version (None when none is)."""
    if analyses.failure:
        return None
    try:
        kept = shared_cache().get(_report_slot("body", campaign_id, filters, options))
    except Exception as error:  # noqa: BLE001 - a cache failure is no kept answer, logged
        analyses._failed(error)
        return None
    return kept if isinstance(kept, KeptBody) else None


def _computed_version(analyses: _Analyses, campaign_id: int, filters: Filters, options: ReportOptions) -> str:
    """The data version of the report last computed on the queue (a short string: no report read)."""
    if analyses.failure:
        return ""
    try:
        marked = shared_cache().get(_report_slot("computed", campaign_id, filters, options))
    except Exception as error:  # noqa: BLE001 - a cache failure is a miss, logged
        analyses._failed(error)
        return ""
    return marked if isinstance(marked, str) else ""


def _answers_since(campaign: Any, moment: str) -> int:
    """Volunteers' answers in the campaign after ``moment`` (an ISO time): an index range."""
    from annotate.models import Judgement

    return Judgement.objects.filter(
        pair__campaign=campaign, answered_at__gt=datetime.fromisoformat(moment), is_training=False
    ).count()


def _stale_message(kept: KeptBody, answers: int, wait: Wait) -> str:
    moment = datetime.fromisoformat(kept.generated_at).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    since = f"{answers:,} answer{'' if answers == 1 else 's'} since"
    if wait.phase == "unavailable":
        return f"As of {moment}; {since}; not updating: {wait.message}"
    return f"As of {moment}; {since}; updating. {wait.message}"


def dashboard_report(
    campaign_id: int, *, filters: Filters = ALL_PAIRS, if_none_match: str | None = None
) -> DashboardReport:
    """The dashboard's answer.

    * The answer kept for the current data version (:func:`keep_body`; for a large campaign the
      ``interactive`` worker keeps it with the intervals): sent as it is.
    * A report the ``interactive`` queue has computed for this version, its intervals still
      computed: the worker's :class:`PendingBody`, with where the intervals' job stands ("live";
      no report is read).
    * A campaign of at most :func:`inline_pairs` pairs (or a computed report without its
      pending body): :func:`campaign_report` with deferred intervals ("live"; the caller keeps
      its answer once the intervals are in).
    * Else the report is queued on the ``interactive`` queue (once per version, again when
      lost) and the answer is the last kept one ("stale", saying as of when and how many answers
      came since) or none ("computing"; "unavailable" when the broker is down).

    ``if_none_match``: the poll's tag; when it is current, no report is read (``not_modified``).
    Raises ``Campaign.DoesNotExist`` and :class:`FilterError`.
    """
    options = _options(filters, None, None)
    state = dataset.data_state(campaign_id)
    version = _version(state, filters, options)
    analyses = _Analyses()
    kept = _kept_body(analyses, campaign_id, filters, options)
    if kept is not None and kept.version == version:
        return DashboardReport("live", "", version, kept.etag, body=kept)
    computed = _computed_version(analyses, campaign_id, filters, options) == version
    if computed or analyses.failure or not _is_large(state.campaign):
        wait = _intervals_wait(analyses, campaign_id, filters, options, version)
        etag = _etag(version, wait)
        if etag == if_none_match:
            return DashboardReport("live", "", version, etag, not_modified=True)
        pending: PendingBody | None = (
            analyses.get(_report_slot("pending-body", campaign_id, filters, options), PendingBody, version)
            if computed and wait is not None
            else None
        )
        if pending is not None and wait is not None:  # the worker built the answer: no report is read
            body = KeptBody(version, etag, pending.generated_at, pending.content(wait))
            return DashboardReport("live", "", version, etag, body=body)
        report = campaign_report(campaign_id, filters=filters, deferred_intervals=True)
        return DashboardReport("live", "", report.version, report_etag_of(report), report)
    wait = _queue_report(campaign_id, filters, options, version)
    tag = f'"{version}-r{wait.phase}{wait.attempt}"'
    if kept is not None:
        answers = _answers_since(state.campaign, kept.generated_at)
        return DashboardReport("stale", _stale_message(kept, answers, wait), version, tag, body=kept)
    if wait.phase == "unavailable":
        return DashboardReport("unavailable", f"No report yet. {wait.message}", version, tag)
    return DashboardReport("computing", f"Computing the report… {wait.message}", version, tag)


# --- the meta-evaluation ---------------------------------------------------------------------------


def compute_meta(campaign_id: int, filters: Filters, options: MetaOptions, use_cache: bool = True) -> MetaResult:
    """Compute (now, in this process) and cache the meta-evaluation (what the interactive worker runs)."""
    state = dataset.data_state(campaign_id)
    version = meta_version(state, filters, options)
    result = MetaResult(
        evaluation=meta_evaluation(dataset.load(state.campaign, filters), options),
        filters=filters,
        version=version,
        generated_at=timezone.now().isoformat(),
    )
    if use_cache:
        shared_cache().set(_meta_slot(campaign_id, filters, options), result, CACHE_SECONDS)
    return result


def meta_status(
    campaign_id: int,
    *,
    filters: Filters = ALL_PAIRS,
    resamples: int | None = None,
    seed: int | None = None,
    enqueue: bool = True,
) -> MetaStatus:
    """The cached meta-evaluation, or "computing" after queueing it (once per data version, and
    again when its task was lost). The dashboard and the API poll it.

    Raises ``Campaign.DoesNotExist`` and :class:`FilterError`.
    """
    options = meta_options(filters, resamples, seed)
    version = meta_version(dataset.data_state(campaign_id), filters, options)
    slot = _meta_slot(campaign_id, filters, options)
    analyses = _Analyses()
    cached: MetaResult | None = analyses.get(slot, MetaResult, version)
    if cached is not None:
        return MetaStatus("ready", version, cached)
    if analyses.failure:  # the cpu queue hands the result over through the cache: it cannot now
        message = (
            f"The analyses cache is unavailable ({analyses.failure}): the paired comparisons are computed "
            "on the cpu queue and kept there, so none can be served now; ask again when the cache is back."
        )
        return MetaStatus("unavailable", version, message=message)
    if not enqueue:
        return MetaStatus("computing", version, message=f"{META_WHAT}: not queued (enqueue=False).")
    job = waits.job_key(slot, version)
    arguments = _arguments(campaign_id, filters, options.resamples, options.seed, job)
    try:
        wait = waits.wait_for(job, META_WHAT, lambda: _send(META_TASK, arguments))
    except (BrokerError, OSError) as error:  # broker down: say so instead of spinning forever
        logger.warning("cannot queue the meta-evaluation of campaign %s: %s", campaign_id, error)
        return MetaStatus("unavailable", version, message=f"The task queue is unreachable ({type(error).__name__}).")
    cached = analyses.get(slot, MetaResult, version)  # computed meanwhile
    if cached is not None:
        return MetaStatus("ready", version, cached)
    return MetaStatus("computing", version, message=wait.message, wait=wait)
