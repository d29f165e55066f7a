"""Analyses too large for a request: the last result kept, refreshed by the ``interactive`` worker.

For a large campaign, a staff page cannot compute some of what it shows in the request (the
volunteers page's quality verdicts, the pair list's worst disagreements). The ``interactive``
worker computes it and keeps it (:func:`keep`) with the version of the campaign's data it was
computed at. A page then shows (:func:`shown`) the kept result when it is that of the current
data; otherwise the last one, dated, while a refresh is queued (once per version: see
:func:`scoring.reports.waits.wait_for`), or, before the first, nothing but the notice.
"""

from __future__ import annotations

import datetime
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from django.core.cache import caches
from kombu.exceptions import OperationalError as BrokerError

from paraeval import broker
from scoring.reports import waits

logger = logging.getLogger(__name__)

T = TypeVar("T")

# The last result of an analysis outlives any change: a page shows it (dated) while it refreshes.
LAST_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class Analysis:
    """One kept analysis of one campaign: where it is kept and how a worker recomputes it.

    ``subject`` names it on the page ("Quality verdicts"); ``first_subject`` before it was ever
    computed, where it differs. ``task`` is called with ``arguments`` and the wait's ``job``."""

    key: str
    subject: str
    task: str
    arguments: dict[str, int] = field(default_factory=dict)
    first_subject: str = ""

    @property
    def cache_key(self) -> str:
        return f"refreshing:{self.key}"


@dataclass(frozen=True)
class Kept(Generic[T]):
    """What a page shows of an analysis.

    ``value`` is None when it was never computed and a worker computes it now. ``as_of`` is set
    when it is the last kept one, not that of the current data: the moment it was computed,
    ``answers_since`` the corpus judgements counted since, and ``wait`` where its refresh stands."""

    value: T | None
    analysis: Analysis | None = None
    as_of: float | None = None
    answers_since: int = 0
    wait: waits.Wait | None = None

    @property
    def current(self) -> bool:
        return self.value is not None and self.as_of is None

    @property
    def notice(self) -> str:
        """What the page says about a result that is not the current data's ('' when it is)."""
        if self.current or self.analysis is None:
            return ""
        detail = f" {self.wait.message}" if self.wait is not None and self.wait.message else ""
        if self.value is None:
            subject = self.analysis.first_subject or self.analysis.subject
            return f"{subject} are being computed for the first time.{detail}"
        assert self.as_of is not None
        moment = datetime.datetime.fromtimestamp(self.as_of, tz=datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        since = f"{self.answers_since:,} answer{'' if self.answers_since == 1 else 's'} since"
        return f"{self.analysis.subject} as of {moment}, {since}, refreshing.{detail}"


def keep(analysis: Analysis, version: str, judgements: int, value: Any) -> None:
    """Keep ``value`` as the analysis's last result, computed at ``version`` of the data, when the
    campaign counted ``judgements`` corpus judgements (what the worker runs, after computing)."""
    last = {"version": version, "at": time.time(), "judgements": judgements, "value": value}
    caches["analyses"].set(analysis.cache_key, last, LAST_SECONDS)


def _queue(analysis: Analysis, version: str) -> waits.Wait:
    from paraeval.celery import app

    job = waits.job_key(analysis.key, version)

    def send() -> None:
        app.send_task(analysis.task, kwargs={**analysis.arguments, "job": job}, queue=broker.INTERACTIVE_QUEUE)

    try:
        return waits.wait_for(job, analysis.subject, send)
    except (BrokerError, OSError) as error:  # broker down: say so; the page still shows the last result
        logger.warning("cannot queue %s (%s): %s", analysis.subject, analysis.key, error)
        return waits.Wait("unavailable", 0, f"The task queue is unreachable ({type(error).__name__}): not refreshing.")


def shown(analysis: Analysis, version: str, judgements: int) -> Kept[Any]:
    """The analysis as a page shows it: the kept result of ``version`` of the data, or else the
    last kept one, dated, while the worker computes it again (queued here, once per version).
    ``judgements``: the campaign's corpus judgements now (the notice counts those since)."""
    last = caches["analyses"].get(analysis.cache_key)
    if last is not None and last["version"] == version:
        return Kept(last["value"], analysis)
    wait = _queue(analysis, version)
    if last is None:
        return Kept(None, analysis, wait=wait)
    since = max(0, judgements - last["judgements"])
    return Kept(last["value"], analysis, as_of=last["at"], answers_since=since, wait=wait)


__all__ = ["Analysis", "Kept", "keep", "shown"]
