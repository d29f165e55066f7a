"""``campaign_report``: the agreement analyses of one campaign, cached by data version.

The dashboard's JSON endpoint, the REST API and ``manage.py evaluate_metrics`` all call
:func:`campaign_report`. Reading the data version costs one query; the report is recomputed
only when that version (or the filters) changed, so a page that polls an unchanged campaign
costs almost nothing.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from scoring.analysis import dataset
from scoring.analysis.bootstrap import DEFAULT_SEED
from scoring.analysis.dataset import FilterError, Filters
from scoring.analysis.report import ANALYSIS_VERSION, ReportOptions, build_report
from scoring.analysis.tables import all_tables

__all__ = ["FilterError", "campaign_report", "campaign_version", "default_resamples"]

# How long a report may stay in the cache without being asked for (seconds).
CACHE_SECONDS = 6 * 3600


def default_resamples() -> int:
    """Bootstrap resamples of a report (setting ``PARAEVAL_BOOTSTRAP_RESAMPLES``)."""
    return settings.PARAEVAL_BOOTSTRAP_RESAMPLES


def _options(filters: Filters, resamples: int | None, seed: int | None) -> ReportOptions:
    count = default_resamples() if resamples is None else resamples
    if count < 0:
        raise FilterError(f"resamples: must be 0 (no intervals) or more, got {count}")
    return ReportOptions(reference=filters.reference, resamples=count, seed=DEFAULT_SEED if seed is None else seed)


def _version(state: dataset.DataState, filters: Filters, options: ReportOptions) -> str:
    return state.version(ANALYSIS_VERSION, filters.as_dict(), options.resamples, options.seed, options.confidence)


def campaign_version(
    campaign_id: int,
    *,
    reference: str = "volunteers",
    origin: str | None = None,
    english_level: str | None = None,
    date_from: datetime.date | None = None,
    date_to: datetime.date | None = None,
    resamples: int | None = None,
    seed: int | None = None,
) -> str:
    """The version string :func:`campaign_report` would return now, for one query.

    Raises ``Campaign.DoesNotExist`` for an unknown campaign and :class:`FilterError` for a
    bad filter.
    """
    filters = Filters.build(reference, origin, english_level, date_from, date_to)
    return _version(dataset.data_state(campaign_id), filters, _options(filters, resamples, seed))


def campaign_report(
    campaign_id: int,
    *,
    reference: str = "volunteers",
    origin: str | None = None,
    english_level: str | None = None,
    date_from: datetime.date | None = None,
    date_to: datetime.date | None = None,
    resamples: int | None = None,
    seed: int | None = None,
    use_cache: bool = True,
) -> dict[str, Any]:
    """Every agreement analysis of one campaign as a JSON-serialisable dict.

    ``reference``: "volunteers" (majority of the campaign judgements) or "gold" (imported
    ``Pair.gold_label``). ``origin`` keeps one corpus; ``english_level`` and the dates keep
    the judgements of volunteers with that level, answered between those days (inclusive).
    ``resamples``: bootstrap resamples (default ``PARAEVAL_BOOTSTRAP_RESAMPLES``, 0 = no
    intervals); ``seed`` fixes them.

    Keys: ``campaign``, ``filters``, ``version`` (changes whenever the data or the filters
    change), ``last_changed``, ``generated_at``, ``counts`` (pairs, labels, judgements,
    scores done / failed / missing), ``subsets`` (corpora), ``metrics``, ``results`` (per
    metric id, per subset: every statistic), ``tables`` (the paper's tables, ready to
    display), ``charts``, ``agreement``, ``volunteers`` and ``bootstrap``.

    Raises ``Campaign.DoesNotExist`` and :class:`FilterError` (a ``ValueError`` naming the
    filter).
    """
    filters = Filters.build(reference, origin, english_level, date_from, date_to)
    options = _options(filters, resamples, seed)
    state = dataset.data_state(campaign_id)
    version = _version(state, filters, options)
    # One entry per campaign and filters, holding the latest version only: an old report is
    # replaced, not piled up.
    slot = (
        "paraeval:report:"
        + hashlib.sha256(
            json.dumps([campaign_id, filters.as_dict(), options.resamples, options.seed]).encode()
        ).hexdigest()[:24]
    )
    if use_cache:
        cached = cache.get(slot)
        if cached is not None and cached.get("version") == version:
            return cached

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
    if use_cache:
        cache.set(slot, report, CACHE_SECONDS)
    return report
