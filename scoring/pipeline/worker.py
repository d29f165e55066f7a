"""The life of a Celery worker: model warm-up, and the heartbeat the status page reads.

* Warm-up: each pool process builds the enabled metrics of the queues its worker consumes and
  scores one pair with each, so models load once per process, before the first real task
  (prefork children do it in ``worker_process_init``; the solo and thread pools in
  ``worker_ready``). ``CELERY_WORKER_PROC_ALIVE_TIMEOUT`` gives the children the time.
  Plug-in metrics are not warmed up: code outside the project that ends or hangs its process
  at start-up would stop the pool from ever starting a process; they load on their first task,
  under its time limit and crash budget (:mod:`scoring.pipeline.limits`).
* Heartbeat: a thread of the worker's main process upserts its :class:`WorkerHeartbeat` row
  every ``PARAEVAL_HEARTBEAT_SECONDS``. It goes through the database, so it works on any
  broker, and the main process is never busy with a task (prefork), so a worker stuck in a
  long batch still shows as alive. A clean shutdown deletes the row; a killed worker's row
  simply stops being refreshed.
* What it does: each task's start and end write the task's name on that row (``doing``), so a
  page that waits for a worker can say what the worker is busy with.

The receivers are connected from ``ScoringConfig.ready()``; they only fire in worker processes.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from celery import signals
from django.conf import settings
from django.db import connections
from django.utils import timezone

from scoring.models import WorkerHeartbeat
from scoring.pipeline import configs

logger = logging.getLogger(__name__)

WARM_UP_PAIR = ("The cat sat on the mat.", "A cat was sitting on the mat.")
# Rows of workers not seen for this long are removed by the next heartbeat of any worker.
FORGET_AFTER = timedelta(days=1)


@dataclass
class _WorkerState:
    """What the main process learns at start-up and its pool processes inherit."""

    hostname: str = ""
    queues: list[str] = field(default_factory=list)
    prefork: bool = True
    heartbeat: Heartbeat | None = None


_state = _WorkerState()
# Held while the heartbeat thread has a database connection open, and taken around every
# fork, so that no pool process is forked holding a copy of that connection.
_fork_lock = threading.Lock()
_fork_held = threading.local()


def _before_fork() -> None:
    _fork_held.value = _fork_lock.acquire(timeout=10)


def _after_fork() -> None:
    if getattr(_fork_held, "value", False):
        _fork_held.value = False
        _fork_lock.release()


def limit_threads(threads: int) -> None:
    """Give torch / BLAS ``threads`` threads in this process and the ones it forks (0: leave them).

    Set through the environment before any of them is imported (they read it at import time).
    """
    if threads > 0:
        for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[variable] = str(threads)


def warm_up(queues: list[str]) -> list[str]:
    """Load the models of the enabled metrics routed to ``queues``, plug-ins aside; return what was warmed."""
    from scoring.pipeline import runner  # the worker's module: the web process (which loads this one) never needs it

    metrics, _ = configs.build_enabled()
    plugins = set(configs.plugin_metrics())
    warmed = []
    for metric in metrics:
        if metric.queue not in queues:
            continue
        if getattr(metric, "package", None) is not None or metric.name in plugins:
            logger.info("warm-up: %s is a plug-in; it loads on its first task", metric.label)
            continue
        started = time.perf_counter()
        outcome = runner.compute(metric, [WARM_UP_PAIR])[0]
        if outcome.ok:
            warmed.append(metric.name)
            logger.info("warm-up: %s ready in %.1f s", metric.label, time.perf_counter() - started)
        else:
            logger.warning("warm-up: %s failed: %s", metric.label, outcome.error)
    return warmed


class Heartbeat(threading.Thread):
    """Refresh this worker's :class:`WorkerHeartbeat` row until stopped."""

    def __init__(self, hostname: str, queues: list[str], interval: float) -> None:
        super().__init__(name="paraeval-heartbeat", daemon=True)
        self.hostname = hostname
        self.queues = ",".join(queues)
        self.interval = interval
        self.started_at = timezone.now()
        self._stopped = threading.Event()

    def run(self) -> None:
        while True:
            self.beat()
            if self._stopped.wait(self.interval):
                return

    def beat(self) -> None:
        with _fork_lock:
            try:
                now = timezone.now()
                WorkerHeartbeat.objects.update_or_create(
                    hostname=self.hostname,
                    defaults={"queues": self.queues, "pid": os.getpid(), "last_seen": now},
                    create_defaults={
                        "queues": self.queues,
                        "pid": os.getpid(),
                        "last_seen": now,
                        "started_at": self.started_at,
                    },
                )
                WorkerHeartbeat.objects.filter(last_seen__lt=now - FORGET_AFTER).delete()
            except Exception as error:  # noqa: BLE001 - a missed beat is logged, the next one retries
                logger.warning("heartbeat of %s not recorded: %s", self.hostname, error)
            finally:
                connections.close_all()

    def stop(self, *, forget: bool = True) -> None:
        self._stopped.set()
        self.join(timeout=self.interval + 5)
        if forget:
            with _fork_lock:
                try:
                    WorkerHeartbeat.objects.filter(hostname=self.hostname).delete()
                except Exception as error:  # noqa: BLE001 - shutting down anyway
                    logger.warning("heartbeat row of %s not removed: %s", self.hostname, error)
                finally:
                    connections.close_all()


# --- Celery signal receivers ----------------------------------------------------------------


def on_after_setup(sender: str, instance: object, **kwargs: object) -> None:
    """``celeryd_after_setup`` (main process, before the pool starts): remember who we are."""
    if not _state.hostname:
        os.register_at_fork(before=_before_fork, after_in_parent=_after_fork, after_in_child=_after_fork)
    limit_threads(settings.PARAEVAL_WORKER_THREADS)
    _state.hostname = sender
    app = instance.app  # type: ignore[attr-defined]
    _state.queues = sorted(app.amqp.queues.consume_from) if app.amqp.queues.consume_from else sorted(app.amqp.queues)
    pool_cls = getattr(instance, "pool_cls", None)
    _state.prefork = "prefork" in getattr(pool_cls, "__module__", str(pool_cls))


def on_process_init(**kwargs: object) -> None:
    """``worker_process_init`` (each prefork child): load the models before the first task."""
    if settings.PARAEVAL_WORKER_WARM_UP and _state.queues:
        warm_up(_state.queues)


def on_ready(sender: object, **kwargs: object) -> None:
    """``worker_ready`` (main process): start the heartbeat; warm up non-forking pools."""
    hostname = getattr(sender, "hostname", None) or _state.hostname
    _state.heartbeat = Heartbeat(hostname, _state.queues, settings.PARAEVAL_HEARTBEAT_SECONDS)
    _state.heartbeat.start()
    if settings.PARAEVAL_WORKER_WARM_UP and not _state.prefork:
        warm_up(_state.queues)


def on_shutdown(**kwargs: object) -> None:
    """``worker_shutdown`` (main process): stop the heartbeat and remove this worker's row."""
    if _state.heartbeat is not None:
        _state.heartbeat.stop()
        _state.heartbeat = None


def on_task_start(sender: object = None, task: object = None, **kwargs: object) -> None:
    """``task_prerun`` (the process that runs the task): note on the worker's row what it does."""
    _note_doing(str(getattr(task, "name", "") or ""), timezone.now())


def on_task_end(**kwargs: object) -> None:
    """``task_postrun``: the worker is idle again."""
    _note_doing("", None)


def _note_doing(name: str, since: datetime | None) -> None:
    if not _state.hostname:
        return  # a task run outside a worker (tests, eager calls): no row to write
    try:
        WorkerHeartbeat.objects.filter(hostname=_state.hostname).update(doing=name[:200], doing_since=since)
    except Exception as error:  # noqa: BLE001 - a status hint must never fail the task
        logger.warning("could not note the task of %s: %s", _state.hostname, error)


def connect_signals() -> None:
    signals.task_prerun.connect(on_task_start, dispatch_uid="scoring.pipeline.worker.task_start", weak=False)
    signals.task_postrun.connect(on_task_end, dispatch_uid="scoring.pipeline.worker.task_end", weak=False)
    signals.celeryd_after_setup.connect(on_after_setup, dispatch_uid="scoring.pipeline.worker.after_setup", weak=False)
    signals.worker_process_init.connect(
        on_process_init, dispatch_uid="scoring.pipeline.worker.process_init", weak=False
    )
    signals.worker_ready.connect(on_ready, dispatch_uid="scoring.pipeline.worker.ready", weak=False)
    signals.worker_shutdown.connect(on_shutdown, dispatch_uid="scoring.pipeline.worker.shutdown", weak=False)
