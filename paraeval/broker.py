"""The Celery broker as the web process and the status page see it: send, and count messages.

Both work the same on Redis and on kombu's filesystem transport (the embedded default). A
broker that cannot be reached never raises out of here into a request: sends report it (and
the process stops trying for a short while, so an outage costs one connection timeout, not
one per judgement) and counts come back as ``None``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.conf import settings

from paraeval.celery import app

logger = logging.getLogger(__name__)

# One task: pairs and the configurations to score them with, all on one queue.
SCORE_PAIRS_TASK = "scoring.pipeline.tasks.score_pairs"
QUEUES = ("llm", "cpu")
# Work a researcher waits for at a page (an upload's dry run or import, a report's intervals, the
# meta-evaluation): a queue of its own, served by a worker of its own (``scripts/worker.sh
# --interactive``) that never scores, so a backlog of scores can never hold it up.
INTERACTIVE_QUEUE = "interactive"
# Message priorities, as Redis (kombu's priority steps) and the embedded broker read them: a
# worker takes the messages of a queue with the smallest number first. Answered pairs' scores
# and the dashboard's analyses go first (0, also what a message without a priority gets); the
# scores of an import or of the sweep's catch-up wait behind them (9).
PRIORITY_FIRST = 0
PRIORITY_BACKLOG = 9
# Celery's own bound on the argument text a message carries for logs and monitors.
ARGS_REPR_LIMIT = 1024


@dataclass(frozen=True)
class TaskMessage:
    """One task to send: its name, arguments and queue (and Celery's hard time limit, if any;
    ``countdown``: seconds before a worker may run it, None to run it at once)."""

    name: str
    args: tuple[object, ...]
    queue: str
    priority: int = PRIORITY_FIRST
    time_limit: int | None = None
    countdown: int | None = None

    def __post_init__(self) -> None:
        if self.countdown is not None and self.countdown < 0:
            raise ValueError(f"countdown: seconds, 0 or more, got {self.countdown}")


@dataclass(frozen=True)
class SendResult:
    sent: int
    not_sent: int
    error: str | None = None


class BrokerGate:
    """After a failed send, skip sends for a while (the periodic sweep catches up)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed_until = 0.0
        self.last_error = ""

    def is_open(self) -> bool:
        with self._lock:
            return time.monotonic() >= self._closed_until

    def trip(self, error: str) -> None:
        with self._lock:
            self._closed_until = time.monotonic() + settings.PARAEVAL_BROKER_BACKOFF_SECONDS
            self.last_error = error

    def reset(self) -> None:
        with self._lock:
            self._closed_until = 0.0
            self.last_error = ""


# One per process: it only remembers that the broker was unreachable a moment ago.
gate = BrokerGate()


def args_repr(args: tuple[object, ...]) -> str | None:
    """The ``argsrepr`` header of a message whose arguments are ints and lists of ints (the
    scores' messages): plain ``repr``, cut to Celery's limit; ``None`` for any other arguments
    (Celery then writes it with its ``saferepr``).

    The text is the same as Celery's within the limit; built by ``repr`` it costs a tenth as much
    CPU, a cost every answer that queues scores paid three times."""
    for argument in args:
        if type(argument) is list:
            if not all(type(item) is int for item in argument):
                return None
        elif type(argument) is not int:
            return None
    text = repr(args)
    return text if len(text) <= ARGS_REPR_LIMIT else text[: ARGS_REPR_LIMIT - 3] + "..."


def send(messages: Sequence[TaskMessage]) -> SendResult:
    """Publish ``messages`` over one connection; never raises for an unreachable broker."""
    if not messages:
        return SendResult(0, 0)
    if not gate.is_open():
        return SendResult(0, len(messages), f"broker unreachable a moment ago ({gate.last_error}); not tried")
    sent = 0
    try:
        with app.producer_or_acquire() as producer:
            # One connection attempt, bounded by the connect timeout: no retry loop here.
            producer.connection.ensure_connection(max_retries=0, timeout=settings.CELERY_BROKER_CONNECTION_TIMEOUT)
            for message in messages:
                app.send_task(
                    message.name,
                    args=message.args,
                    queue=message.queue,
                    priority=message.priority,
                    time_limit=message.time_limit,
                    countdown=message.countdown,
                    producer=producer,
                    retry=False,
                    argsrepr=args_repr(message.args),
                    kwargsrepr="{}",
                )
                sent += 1
    except Exception as error:  # noqa: BLE001 - kombu, redis and socket errors all mean "not sent"
        text = f"{type(error).__name__}: {error}"
        gate.trip(text)
        logger.warning(
            "broker unreachable: %d of %d scoring tasks not sent (%s); the sweep will queue them",
            len(messages) - sent,
            len(messages),
            text,
        )
        return SendResult(sent, len(messages) - sent, text)
    return SendResult(sent, 0)


@dataclass(frozen=True)
class QueueLengths:
    """Messages waiting in each queue (``None`` with the error when the broker is unreachable)."""

    lengths: dict[str, int] | None
    error: str | None = None
    transport: str = ""


def queue_lengths(queues: Iterable[str] = QUEUES) -> QueueLengths:
    """Count waiting messages: Redis list lengths, or message files of the filesystem broker.

    Messages a worker has taken but not yet acknowledged are not counted.
    """
    names = list(queues)
    try:
        with app.connection_for_read() as connection:
            connection.ensure_connection(max_retries=0, timeout=settings.CELERY_BROKER_CONNECTION_TIMEOUT)
            channel = connection.default_channel
            lengths = {name: int(channel.queue_declare(queue=name).message_count) for name in names}
            return QueueLengths(lengths, transport=connection.transport.driver_type)
    except Exception as error:  # noqa: BLE001 - reported on the status page, never raised
        return QueueLengths(None, f"{type(error).__name__}: {error}")
