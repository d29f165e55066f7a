"""Bounded waits for the analyses computed on the ``interactive`` queue: queued again when lost, and said.

A page that polls for a computation (the dashboard's bootstrap intervals, the meta-evaluation)
must never wait for a task that nobody will run. Each computation is a *job*: one record in the
shared ``analyses`` cache per result slot and data version, saying when it was queued, when a
worker started it and when it finished. A poll that finds no result looks at that record:

* no record: queue the task (one process wins the cache's atomic ``add``);
* queued, not started after :data:`QUEUE_SECONDS`: lost (a broker that dropped it, a worker
  that never consumes the ``interactive`` queue, a record whose task went to another data version), so
  queue it again;
* started, not finished after :data:`RUN_SECONDS`: the worker died with it; queue it again;
* finished, yet still no result for this version :data:`FINISHED_SECONDS` later: it stored a
  result for other data (the data changed while it ran); queue it again. (The grace lets a web
  process whose view of the data is up to a minute old catch up with the worker's.)

One job per result slot at a time: while the job for earlier data of the same slot is queued or
running (and not lost), a poll for newer data queues nothing and waits behind it. On a large
campaign that answers arrive in every second, each poll sees new data; queueing a computation of
minutes for each would fill the ``interactive`` queue that uploads and imports share. The job
reads the data when it starts, so the wait is at most one computation longer.

The page shows :attr:`Wait.message`, which names what it waits for and when it gives up on it.
The tasks are idempotent, so a job queued twice costs at most one more computation.
"""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.cache import BaseCache, caches

logger = logging.getLogger(__name__)

# A queued job no worker has started after this many seconds is queued again.
QUEUE_SECONDS = 120
# A started job that has not finished after this many seconds is queued again.
RUN_SECONDS = 900
# A finished job whose result is for other data is queued again after this many seconds.
FINISHED_SECONDS = 60
# How long a job record is kept (it is per data version: old ones just expire).
RECORD_SECONDS = 6 * 3600


@dataclass(frozen=True)
class Wait:
    """Where a job stands: ``phase`` "queued", "running" or "unavailable"; ``attempt`` counts the
    times it was queued; ``message`` is what the page shows."""

    phase: str
    attempt: int
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"phase": self.phase, "attempt": self.attempt}


def _cache() -> BaseCache:
    return caches["analyses"]


def job_key(slot: str, version: str) -> str:
    """The record of the job that computes ``slot`` for data ``version``."""
    return f"{slot}:job:{version}"


def _in_flight_key(job: str) -> str:
    """Where the slot of ``job`` names its last queued job."""
    return f"{job.rsplit(':job:', 1)[0]}:in-flight"


def _ahead(job: str, now: float) -> dict[str, Any] | None:
    """The record of the slot's job for other data when it is still queued or running (not lost)."""
    cache = _cache()
    other = cache.get(_in_flight_key(job))
    if other is None or other == job:
        return None
    record: dict[str, Any] | None = cache.get(other)
    if record is None or record.get("finished_at") is not None or _lost(record, now):
        return None
    return record


def _clock(moment: float) -> str:
    return datetime.datetime.fromtimestamp(moment, tz=datetime.UTC).strftime("%H:%M:%S UTC")


def _lost(record: dict[str, Any], now: float) -> str:
    """Why the job of ``record`` will not deliver (then it is queued again), or ""."""
    finished_at = record.get("finished_at")
    if finished_at is not None:
        if now - finished_at > FINISHED_SECONDS:
            return f"it finished at {_clock(finished_at)} with a result for other data (the data changed meanwhile)"
        return ""
    started = record.get("started_at")
    if started is None and now - record["queued_at"] > QUEUE_SECONDS:
        return f"no worker started it within {QUEUE_SECONDS} s"
    if started is not None and now - started > RUN_SECONDS:
        return f"the worker that started it at {_clock(started)} did not finish within {RUN_SECONDS // 60} min"
    return ""


def _describe(record: dict[str, Any], what: str) -> Wait:
    attempt = int(record["attempt"])
    again = f" (queued again: {record['why']})" if record.get("why") else ""
    finished_at = record.get("finished_at")
    if finished_at is not None:
        return Wait(
            "finishing",
            attempt,
            f"{what}: an interactive worker finished at {_clock(finished_at)} for data that changed meanwhile; "
            f"queued again at {_clock(finished_at + FINISHED_SECONDS)} unless the page catches up with it.",
        )
    started = record.get("started_at")
    if started is not None:
        deadline = _clock(started + RUN_SECONDS)
        return Wait(
            "running",
            attempt,
            f"{what}: an interactive worker started at {_clock(started)}{again}; "
            f"queued again at {deadline} if it has not finished.",
        )
    deadline = _clock(record["queued_at"] + QUEUE_SECONDS)
    return Wait(
        "queued",
        attempt,
        f"{what}: waiting for an interactive worker, queued at {_clock(record['queued_at'])}{again}; "
        f"queued again at {deadline} if no worker has started it.",
    )


def _now() -> float:
    """Wall-clock seconds (the cache is shared between processes and machines)."""
    return time.time()


def wait_for(job: str, what: str, send: Callable[[], None]) -> Wait:
    """Make sure the job is queued (again, when lost) and say where it stands.

    ``send`` queues the task (its arguments must include ``job``); it may raise the broker's
    error, which the caller turns into an "unavailable" answer: the record is then removed so
    the next poll tries again.
    """
    cache = _cache()
    moment = _now()
    record: dict[str, Any] | None = cache.get(job)
    if record is None:
        ahead = _ahead(job, moment)
        if ahead is not None:
            return _behind(ahead, what)
        record = {"attempt": 1, "queued_at": moment, "started_at": None, "finished_at": None, "why": ""}
        if cache.add(job, record, RECORD_SECONDS):
            _send(job, record, send)
            return _describe(record, what)
        record = cache.get(job) or record
    why = _lost(record, moment)
    if why:
        attempt = int(record["attempt"]) + 1
        fresh = {"attempt": attempt, "queued_at": moment, "started_at": None, "finished_at": None, "why": why}
        # One process queues each new attempt; the others describe it.
        if cache.add(f"{job}:attempt:{attempt}", 1, RECORD_SECONDS):
            cache.set(job, fresh, RECORD_SECONDS)
            logger.warning("%s: queued again (attempt %d): %s", what, attempt, why)
            _send(job, fresh, send)
        record = cache.get(job) or fresh
    return _describe(record, what)


def _behind(ahead: dict[str, Any], what: str) -> Wait:
    started = ahead.get("started_at")
    where = (
        f"an interactive worker started it at {_clock(started)}"
        if started is not None
        else f"queued at {_clock(ahead['queued_at'])}"
    )
    return Wait(
        "behind",
        int(ahead["attempt"]),
        f"{what}: waiting for the computation for earlier data to finish ({where}); then queued for the current data.",
    )


def _send(job: str, record: dict[str, Any], send: Callable[[], None]) -> None:
    try:
        send()
    except Exception:
        _cache().delete(job)
        _cache().delete(f"{job}:attempt:{record['attempt']}")
        raise
    _cache().set(_in_flight_key(job), job, RECORD_SECONDS)


def _update(job: str | None, **fields: float) -> dict[str, Any] | None:
    if not job:
        return None
    cache = _cache()
    record: dict[str, Any] | None = cache.get(job)
    if record is None:
        return None
    record.update(fields)
    cache.set(job, record, RECORD_SECONDS)
    return record


def started(job: str | None) -> bool:
    """A worker starts the job; False when it already finished (a duplicate: skip it)."""
    if job:
        record = _cache().get(job)
        if record is not None and record.get("finished_at") is not None:
            return False
    _update(job, started_at=_now())
    return True


def finished(job: str | None) -> None:
    """A worker finished the job (its result is in the cache, for the version it read)."""
    _update(job, finished_at=_now())
