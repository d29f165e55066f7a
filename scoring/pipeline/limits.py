"""How long a metric may compute, and how often it may kill its worker: the limits of scoring.

Every metric has a time limit per batch (``PARAEVAL_METRIC_TIME_LIMIT``, overridden per metric
name by ``PARAEVAL_METRIC_TIME_LIMITS``) and a crash budget (``PARAEVAL_METRIC_CRASH_BUDGET``).
Two layers enforce the time limit:

* in the worker, :func:`deadline` interrupts the metric's batch at its own limit (a
  :class:`MetricTimeLimitExceeded` raised by a ``SIGALRM`` handler); the runner stores the
  batch as failed with the reason and goes on with the task's other metrics. It is written
  here rather than taken from Celery because Celery's soft time limit is one per task, and one
  task carries every metric of a queue for its pairs: a hanging metric must not use up the time
  of the others;
* Celery's hard time limit per message (:func:`task_time_limit`: the sum of its metrics' limits
  and a grace period, sent with the message) kills a pool process stuck where no signal handler
  runs (a C extension that never returns); the runner's attempt rows
  (:class:`~scoring.models.ScoreAttempt`) count that death like any other.

The web process reads :func:`task_time_limit` when it queues; only the worker arms deadlines.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import FrameType

from django.conf import settings

# Seconds Celery's hard limit leaves beyond the sum of the metrics' own limits: the time to store
# a batch and to read the next, so that only a metric deaf to its deadline meets the hard limit.
TASK_GRACE_SECONDS = 60
# Once a deadline has passed, the interruption is raised again this often, in case the metric
# caught it and carried on.
REPEAT_SECONDS = 1.0


class MetricTimeLimitExceeded(BaseException):
    """Raised inside a metric's computation when its time limit is up.

    A ``BaseException``, like ``KeyboardInterrupt``: a metric's ``except Exception`` (the
    library's own one-pair-at-a-time fallback included) does not swallow it.
    """

    def __init__(self, seconds: int) -> None:
        super().__init__(f"time limit of {seconds} s exceeded")
        self.seconds = seconds


def time_limit(metric_name: str) -> int:
    """Seconds ``metric_name`` may spend on one batch of pairs."""
    return int(settings.PARAEVAL_METRIC_TIME_LIMITS.get(metric_name, settings.PARAEVAL_METRIC_TIME_LIMIT))


def crash_budget() -> int:
    """How many times a batch may kill its worker process before its scores are stored as failed."""
    return int(settings.PARAEVAL_METRIC_CRASH_BUDGET)


def task_time_limit(metric_names: Iterable[str]) -> int:
    """Celery's hard time limit for one message carrying these metrics (seconds)."""
    return sum(time_limit(name) for name in metric_names) + TASK_GRACE_SECONDS


def timed_out_reason(metric_name: str, seconds: int) -> str:
    """The error stored with the scores of a batch stopped at its time limit."""
    return f"metric {metric_name} exceeded its time limit of {seconds} s"


def crashed_reason(metric_name: str, deaths: int) -> str:
    """The error stored with the scores of a batch whose computation killed its worker ``deaths`` times."""
    return f"the worker died {deaths} times while computing metric {metric_name}"


def can_interrupt() -> bool:
    """Whether :func:`deadline` can interrupt here: ``SIGALRM`` exists and this is the main thread
    (a prefork or solo worker, a management command; not Celery's thread pool)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Raise :class:`MetricTimeLimitExceeded` in the body once ``seconds`` have passed.

    Where it cannot interrupt (:func:`can_interrupt` false) the body runs without a deadline,
    and Celery's hard time limit of the task is the only bound.
    """
    if not can_interrupt():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise MetricTimeLimitExceeded(seconds)

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
