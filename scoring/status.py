"""What the staff status page shows: queues, workers, scores per configuration, throughput.

Read-only and cheap: a handful of aggregate queries and one broker round trip (which, if the
broker is down, reports the error instead of failing the page).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q
from django.db.models.functions import TruncMinute
from django.utils import timezone

from scoring import broker, configs
from scoring.metrics.base import Metric
from scoring.models import MetricConfig, Score, WorkerHeartbeat
from scoring.runner import scorable_pairs

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


@dataclass
class StatusReport:
    generated_at: datetime
    transport: str
    queue_lengths: dict[str, int] | None
    broker_error: str | None
    pairs: int
    workers: list[WorkerStatus]
    configs: list[ConfigStatus]
    unavailable: list[configs.UnavailableMetric]
    # queue -> window minutes -> scores per minute
    throughput: dict[str, dict[int, float]]
    # queue -> scores stored in each of the last minutes (oldest first)
    series: dict[str, list[int]]
    series_minutes: list[datetime] = field(default_factory=list)

    @property
    def workers_alive(self) -> int:
        return sum(1 for worker in self.workers if worker.alive)

    @property
    def totals(self) -> dict[str, int]:
        enabled = [config for config in self.configs if config.enabled]
        return {
            "done": sum(config.done for config in enabled),
            "failed": sum(config.failed for config in enabled),
            "pending": sum(config.pending for config in enabled),
        }


def collect(now: datetime | None = None) -> StatusReport:
    """Gather the status report (every number as of ``now``)."""
    now = now or timezone.now()
    queues = broker.queue_lengths(broker.QUEUES)
    metrics, unavailable = configs.build_enabled()
    minutes, series = _series(now)
    return StatusReport(
        generated_at=now,
        transport=queues.transport or _transport_name(),
        queue_lengths=queues.lengths,
        broker_error=queues.error,
        pairs=scorable_pairs().count(),
        workers=_workers(now),
        configs=_configs(metrics),
        unavailable=unavailable,
        throughput=_throughput(now),
        series=series,
        series_minutes=minutes,
    )


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
            )
        )
    return workers


def _configs(metrics: list[Metric]) -> list[ConfigStatus]:
    enabled_hashes = {metric.config_hash for metric in metrics}
    total = scorable_pairs().count()
    counts = {
        row["metric_config"]: row
        for row in Score.objects.filter(pair__is_training=False)
        .values("metric_config")
        .annotate(
            done=Count("id", filter=Q(status=Score.Status.DONE)),
            failed=Count("id", filter=Q(status=Score.Status.FAILED)),
        )
    }
    rows = {row.config_hash: row for row in MetricConfig.objects.all()}
    report: list[ConfigStatus] = []
    for metric in metrics:
        row = rows.get(metric.config_hash)
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


def _throughput(now: datetime) -> dict[str, dict[int, float]]:
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
    result: dict[str, dict[int, float]] = {queue: dict.fromkeys(THROUGHPUT_WINDOWS, 0.0) for queue in broker.QUEUES}
    for row in rows:
        queue = row["metric_config__queue"]
        result[queue] = {minutes: round(row[f"last_{minutes}"] / minutes, 1) for minutes in THROUGHPUT_WINDOWS}
    return result


def _series(now: datetime) -> tuple[list[datetime], dict[str, list[int]]]:
    current = now.replace(second=0, microsecond=0)
    minutes = [current - timedelta(minutes=back) for back in range(SERIES_MINUTES - 1, -1, -1)]
    rows = (
        Score.objects.filter(computed_at__gte=minutes[0], computed_at__lte=now)
        .annotate(minute=TruncMinute("computed_at"))
        .values("minute", "metric_config__queue")
        .annotate(count=Count("id"))
    )
    series: dict[str, list[int]] = {queue: [0] * SERIES_MINUTES for queue in broker.QUEUES}
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
        "configs": [asdict(config) for config in report.configs],
        "totals": report.totals,
        "unavailable": [asdict(metric) for metric in report.unavailable],
        "throughput": {queue: {str(k): v for k, v in windows.items()} for queue, windows in report.throughput.items()},
        "series": {
            "minutes": [minute.isoformat() for minute in report.series_minutes],
            "counts": report.series,
        },
    }
