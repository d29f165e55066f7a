"""Admin for metric configurations, scores (failed ones with their error, and a retry), workers and tunings."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib import admin, messages
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest
from django.utils import timezone

from annotate.admin import TeamScopedAdmin
from scoring.models import MetricConfig, Score, TunedJudge, WorkerHeartbeat
from scoring.pipeline import dispatch


@admin.register(MetricConfig)
class MetricConfigAdmin(admin.ModelAdmin[MetricConfig]):
    list_display = ("label", "metric", "queue", "higher_is_closer", "natural_threshold", "done", "failed", "created_at")
    list_filter = ("metric", "queue")
    search_fields = ("label", "metric", "config_hash")
    readonly_fields = (
        "metric",
        "config",
        "config_hash",
        "label",
        "higher_is_closer",
        "natural_threshold",
        "queue",
        "created_at",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[MetricConfig]:
        configs: QuerySet[MetricConfig] = (
            super()
            .get_queryset(request)
            .annotate(
                done_count=Count("scores", filter=Q(scores__status=Score.Status.DONE)),
                failed_count=Count("scores", filter=Q(scores__status=Score.Status.FAILED)),
            )
        )
        return configs

    @admin.display(ordering="done_count", description="done")
    def done(self, config: MetricConfig) -> int:
        return int(config.done_count)  # type: ignore[attr-defined]

    @admin.display(ordering="failed_count", description="failed")
    def failed(self, config: MetricConfig) -> int:
        return int(config.failed_count)  # type: ignore[attr-defined]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Configurations come from the metrics' code and settings, never typed by hand.
        return False


@admin.register(Score)
class ScoreAdmin(TeamScopedAdmin):
    campaign_path = "pair__campaign"
    list_display = ("pair", "metric_config", "value", "status", "short_error", "attempts", "computed_at")
    list_filter = ("status", "metric_config", ("pair__campaign", admin.RelatedOnlyFieldListFilter))
    list_select_related = ("pair", "metric_config")
    search_fields = ("error", "pair__external_id")
    readonly_fields = ("pair", "metric_config", "value", "status", "error", "attempts", "computed_at")
    actions = ("retry_failed",)
    date_hierarchy = "computed_at"

    @admin.display(description="error")
    def short_error(self, score: Score) -> str:
        return score.error if len(score.error) <= 160 else score.error[:159] + "…"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Retry the selected failed scores")
    def retry_failed(self, request: HttpRequest, queryset: QuerySet[Score]) -> None:
        count = dispatch.retry_failed(queryset)
        if count:
            self.message_user(
                request,
                f"{count} failed score(s) reset and queued again; the workers will store them shortly "
                "(if the broker is unreachable, the periodic sweep queues them once it is back).",
                messages.SUCCESS,
            )
        else:
            self.message_user(request, "None of the selected scores had failed: nothing to retry.", messages.WARNING)


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin[WorkerHeartbeat]):
    list_display = ("hostname", "queues", "pid", "started_at", "last_seen", "alive")
    readonly_fields = ("hostname", "queues", "pid", "started_at", "last_seen")

    @admin.display(boolean=True)
    def alive(self, heartbeat: WorkerHeartbeat) -> bool:
        return timezone.now() - heartbeat.last_seen <= timedelta(seconds=settings.PARAEVAL_WORKER_ALIVE_SECONDS)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(TunedJudge)
class TunedJudgeAdmin(TeamScopedAdmin):
    """Tunings of judge models (manage.py tune_judge): their progress while they run, then the result."""

    list_display = ("__str__", "status", "step", "loss", "validation_auc", "campaign", "reference", "created_at")
    list_filter = ("status", "base_judge", "template")
    list_select_related = ("campaign",)
    readonly_fields = [field.name for field in TunedJudge._meta.fields]

    @admin.display(description="step")
    def step(self, row: TunedJudge) -> str:
        progress = row.progress or {}
        if not progress:
            return "-"
        return f"{progress.get('adapter')} {progress.get('step')}/{progress.get('steps')}"

    @admin.display(description="loss")
    def loss(self, row: TunedJudge) -> str:
        value = (row.progress or {}).get("loss")
        return f"{value:.3f}" if isinstance(value, float) else "-"

    @admin.display(description="validation AUC (best)")
    def validation_auc(self, row: TunedJudge) -> str:
        progress = row.progress or {}
        value, best = progress.get("validation_auc"), progress.get("best_auc")
        if not isinstance(best, float):
            return "-"
        return f"{value:.3f} ({best:.3f})" if isinstance(value, float) else f"- ({best:.3f})"

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Tunings are started by manage.py tune_judge, which checks the request.
        return False
