"""What the staff status page shows: queues, workers, scores per configuration, throughput.

Read-only and cheap: a handful of aggregate queries and one broker round trip (which, if the
broker is down, reports the error instead of failing the page).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncMinute
from django.utils import timezone

from annotate.models import CampaignTally
from paraeval import broker
from scoring.models import MetricConfig, Score, ScoreTally, WorkerHeartbeat
from scoring.pipeline import configs

if TYPE_CHECKING:  # web code imports no metric module (tests/test_workers_web_imports.py)
    from scoring.metrics.base import Metric

# Windows (minutes) over which throughput is averaged, and the length of the per-minute series.
THROUGHPUT_WINDOWS = (1, 5, 15)
SERIES_MINUTES = 10


@dataclass(frozen=True)
class ConfigStatus:
    """Scores of one metric configuration over the scorable pairs."""

    id: int | None
    metric: str
    label: str
    queue: str
    enabled: bool
    done: int
    failed: int
    pending: int


@dataclass(frozen=True)
class WorkerStatus:
    hostname: str
    queues: str
    pid: int | None
    started_at: datetime
    last_seen: datetime
    seconds_since: float
    alive: bool
    doing: str = ""  # the task it runs now ("" when idle)


@dataclass(frozen=True)
class QueueStatus:
    """One queue: what it serves, its backlog, the live workers consuming it, its throughput."""

    queue: str
    serves: str  # the judge model of an llm.<model> queue; what else runs there otherwise
    waiting: int | None  # None: broker unreachable
    workers_alive: int
    per_minute: dict[int, float]


@dataclass(frozen=True)
class ServedJudgeStatus:
    """A judge model behind an OpenAI-compatible server: who it is and what its probe found."""

    judge: str
    server: str
    model: str
    mode: str
    probe: list[str]


@dataclass
class StatusReport:
    generated_at: datetime
    transport: str
    queue_lengths: dict[str, int] | None
    broker_error: str | None
    pairs: int
    workers: list[WorkerStatus]
    configurations: list[ConfigStatus]
    unavailable: list[configs.UnavailableMetric]
    # queue -> window minutes -> scores per minute
    throughput: dict[str, dict[int, float]]
    # queue -> scores stored in each of the last minutes (oldest first)
    series: dict[str, list[int]]
    series_minutes: list[datetime] = field(default_factory=list)
    queues: list[QueueStatus] = field(default_factory=list)
    served: list[ServedJudgeStatus] = field(default_factory=list)

    @property
    def workers_alive(self) -> int:
        return sum(1 for worker in self.workers if worker.alive)

    @property
    def totals(self) -> dict[str, int]:
        enabled = [config for config in self.configurations if config.enabled]
        return {
            "done": sum(config.done for config in enabled),
            "failed": sum(config.failed for config in enabled),
            "pending": sum(config.pending for config in enabled),
        }


def collect(now: datetime | None = None) -> StatusReport:
    """Gather the status report (every number as of ``now``)."""
    now = now or timezone.now()
    # The interactive queue first: what a researcher waits for at a page (no scores go there).
    names = [broker.INTERACTIVE_QUEUE, *configs.all_queues()]
    queues = broker.queue_lengths(names)
    metrics, unavailable = configs.build_enabled()
    minutes, series = _series(now, names)
    workers = _workers(now)
    throughput = _throughput(now, names)
    # Pairs and scores as the database's tallies keep them: two small grouped reads, never a
    # count over every pair and score.
    by_language, counts = _pair_and_score_counts()
    return StatusReport(
        generated_at=now,
        transport=queues.transport or _transport_name(),
        queue_lengths=queues.lengths,
        broker_error=queues.error,
        pairs=sum(by_language.values()),
        workers=workers,
        configurations=_configs(metrics, by_language, counts),
        unavailable=unavailable,
        throughput=throughput,
        series=series,
        series_minutes=minutes,
        queues=_queues(names, queues.lengths, workers, throughput),
        served=_served(metrics),
    )


def _served(metrics: list[Metric]) -> list[ServedJudgeStatus]:
    """The served judges among the enabled metrics, once each, with their probe's findings
    (:mod:`scoring.metrics.served` probed each server when its metric was built)."""
    found: dict[str, ServedJudgeStatus] = {}
    for metric in metrics:
        served = getattr(metric, "served", None)
        judge = str(getattr(metric, "judge", ""))
        if served is None or judge in found:
            continue
        found[judge] = ServedJudgeStatus(
            judge=judge,
            server=served.endpoint.base_url,
            model=served.identity.model,
            mode=served.plan.mode,
            probe=served.plan.capabilities.lines(),
        )
    return list(found.values())


_SERVES = {
    broker.INTERACTIVE_QUEUE: "uploads, report intervals, meta-evaluation (never scores)",
    "cpu": "lexical metrics, sweep",
    "llm": "embedding models (BERTScore, ParaScore, SBERT)",
}


def _queues(
    names: list[str],
    lengths: dict[str, int] | None,
    workers: list[WorkerStatus],
    throughput: dict[str, dict[int, float]],
) -> list[QueueStatus]:
    models = configs.queue_models()
    report = []
    for name in names:
        alive = sum(1 for worker in workers if worker.alive and name in worker.queues.split(","))
        report.append(
            QueueStatus(
                queue=name,
                serves=models.get(name) or _SERVES.get(name, ""),
                waiting=None if lengths is None else lengths.get(name, 0),
                workers_alive=alive,
                per_minute=throughput.get(name, {}),
            )
        )
    return report


def _transport_name() -> str:
    return str(settings.CELERY_BROKER_URL).split("://", 1)[0]


def _workers(now: datetime) -> list[WorkerStatus]:
    alive_after = settings.PARAEVAL_WORKER_ALIVE_SECONDS
    workers = []
    for row in WorkerHeartbeat.objects.order_by("hostname"):
        since = (now - row.last_seen).total_seconds()
        workers.append(
            WorkerStatus(
                hostname=row.hostname,
                queues=row.queues,
                pid=row.pid,
                started_at=row.started_at,
                last_seen=row.last_seen,
                seconds_since=round(max(since, 0.0), 1),
                alive=since <= alive_after,
                doing=row.doing if since <= alive_after else "",
            )
        )
    return workers


def _pair_and_score_counts() -> tuple[dict[str, int], dict[int, dict[str, Any]]]:
    """Scorable pairs (every pair but the training ones) per campaign language, and done and
    failed scores per configuration, summed over the campaigns' kept tallies."""
    by_language = {
        row["campaign__language"]: row["n"]
        for row in CampaignTally.objects.values("campaign__language")
        .annotate(n=Sum("pairs") + Sum("checks"))
        .order_by()
    }
    counts: dict[int, dict[str, Any]] = {
        row["metric_config"]: dict(row)
        for row in ScoreTally.objects.values("metric_config")
        .annotate(done=Sum("done"), failed=Sum("failed"))
        .filter(Q(done__gt=0) | Q(failed__gt=0))
        .order_by()
    }
    return by_language, counts


def _configs(
    metrics: list[Metric], by_language: dict[str, int], counts: dict[int, dict[str, Any]]
) -> list[ConfigStatus]:
    enabled_hashes = {metric.config_hash for metric in metrics}
    everything = sum(by_language.values())
    rows = {row.config_hash: row for row in MetricConfig.objects.all()}
    report: list[ConfigStatus] = []
    for metric in metrics:
        row = rows.get(metric.config_hash)
        # A ParaPLUIE template scores the pairs of campaigns in its language only.
        language = configs.metric_language(metric)
        total = by_language.get(language, 0) if language else everything
        done = counts.get(row.pk, {}).get("done", 0) if row else 0
        failed = counts.get(row.pk, {}).get("failed", 0) if row else 0
        report.append(
            ConfigStatus(
                id=row.pk if row else None,
                metric=metric.name,
                label=row.label if row else metric.label,
                queue=metric.queue,
                enabled=True,
                done=done,
                failed=failed,
                pending=max(total - done - failed, 0),
            )
        )
    # Configurations no longer enabled (another model, a removed metric) keep their scores.
    for row in rows.values():
        if row.config_hash in enabled_hashes or row.pk not in counts:
            continue
        report.append(
            ConfigStatus(
                id=row.pk,
                metric=row.metric,
                label=row.label,
                queue=row.queue,
                enabled=False,
                done=counts[row.pk]["done"],
                failed=counts[row.pk]["failed"],
                pending=0,
            )
        )
    return report


def _throughput(now: datetime, queues: list[str]) -> dict[str, dict[int, float]]:
    longest = max(THROUGHPUT_WINDOWS)
    annotations = {
        f"last_{minutes}": Count("id", filter=Q(computed_at__gte=now - timedelta(minutes=minutes)))
        for minutes in THROUGHPUT_WINDOWS
    }
    rows = (
        Score.objects.filter(computed_at__gte=now - timedelta(minutes=longest), computed_at__lte=now)
        .values("metric_config__queue")
        .annotate(**annotations)
    )
    result: dict[str, dict[int, float]] = {queue: dict.fromkeys(THROUGHPUT_WINDOWS, 0.0) for queue in queues}
    for row in rows:
        counted: dict[str, Any] = dict(row)  # the window keys are built from THROUGHPUT_WINDOWS
        queue = counted["metric_config__queue"]
        result[queue] = {minutes: round(counted[f"last_{minutes}"] / minutes, 1) for minutes in THROUGHPUT_WINDOWS}
    return result


def _series(now: datetime, queues: list[str]) -> tuple[list[datetime], dict[str, list[int]]]:
    current = now.replace(second=0, microsecond=0)
    minutes = [current - timedelta(minutes=back) for back in range(SERIES_MINUTES - 1, -1, -1)]
    rows = (
        Score.objects.filter(computed_at__gte=minutes[0], computed_at__lte=now)
        .annotate(minute=TruncMinute("computed_at"))
        .values("minute", "metric_config__queue")
        .annotate(count=Count("id"))
    )
    series: dict[str, list[int]] = {queue: [0] * SERIES_MINUTES for queue in queues}
    index = {minute: position for position, minute in enumerate(minutes)}
    for row in rows:
        queue = row["metric_config__queue"]
        position = index.get(row["minute"])
        if position is None:
            continue
        series.setdefault(queue, [0] * SERIES_MINUTES)[position] += row["count"]
    return minutes, series


def as_json(report: StatusReport) -> dict[str, object]:
    """The report as JSON-ready data (what the page polls)."""
    return {
        "generated_at": report.generated_at.isoformat(),
        "transport": report.transport,
        "queues": report.queue_lengths,
        "broker_error": report.broker_error,
        "pairs": report.pairs,
        "workers_alive": report.workers_alive,
        "workers": [
            {**asdict(worker), "started_at": worker.started_at.isoformat(), "last_seen": worker.last_seen.isoformat()}
            for worker in report.workers
        ],
        "configurations": [asdict(config) for config in report.configurations],
        "queue_status": [
            {**asdict(queue), "per_minute": {str(k): v for k, v in queue.per_minute.items()}} for queue in report.queues
        ],
        "totals": report.totals,
        "unavailable": [asdict(metric) for metric in report.unavailable],
        "served": [asdict(judge) for judge in report.served],
        "throughput": {queue: {str(k): v for k, v in windows.items()} for queue, windows in report.throughput.items()},
        "series": {
            "minutes": [minute.isoformat() for minute in report.series_minutes],
            "counts": report.series,
        },
    }


@dataclass(frozen=True)
class BusyWorker:
    """A live worker of a queue and the task it runs now (``doing`` "" when idle)."""

    hostname: str
    doing: str
    since: datetime | None


@dataclass(frozen=True)
class QueueWait:
    """What a task queued on ``queue`` waits behind: the messages waiting there (``None``: the
    broker could not be asked) and the live workers that consume the queue, with their tasks."""

    queue: str
    waiting: int | None
    workers: tuple[BusyWorker, ...]

    @property
    def served(self) -> bool:
        return bool(self.workers)

    @property
    def message(self) -> str:
        """One sentence for the page that waits: never "no worker" while one consumes the queue."""
        if not self.workers:
            if self.queue == broker.INTERACTIVE_QUEUE:
                start = (
                    "scripts/worker.sh --interactive "
                    "(scripts/run.sh starts one; with Docker, the interactive-worker service)"
                )
            else:
                start = f"scripts/worker.sh --queues {self.queue} (scripts/run.sh starts one on every scoring queue)"
            return f"No worker consumes the {self.queue} queue: start one with {start}."
        if self.waiting is None:
            ahead = "the broker could not be asked how many tasks wait"
        else:
            ahead = f"{self.waiting} task{'s' if self.waiting != 1 else ''} waiting on the {self.queue} queue"
            ahead += " (this one included)" if self.waiting else ""
        doing = "; ".join(
            f"{worker.hostname} is running {worker.doing} since {worker.since.astimezone(UTC):%H:%M:%S} UTC"
            if worker.doing and worker.since
            else f"{worker.hostname} is idle"
            for worker in self.workers
        )
        return f"Queued: {ahead}; {doing}."


def queue_wait(queue: str = broker.INTERACTIVE_QUEUE, now: datetime | None = None) -> QueueWait:
    """What a task on ``queue`` waits behind now: one broker round trip and one query."""
    now = now or timezone.now()
    alive_since = now - timedelta(seconds=settings.PARAEVAL_WORKER_ALIVE_SECONDS)
    rows = WorkerHeartbeat.objects.filter(last_seen__gte=alive_since).order_by("hostname")
    workers = tuple(
        BusyWorker(row.hostname, row.doing, row.doing_since) for row in rows if queue in row.queues.split(",")
    )
    lengths = broker.queue_lengths([queue]).lengths
    return QueueWait(queue, None if lengths is None else lengths.get(queue, 0), workers)
