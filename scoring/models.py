"""Metric configurations and the scores they give each pair."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class MetricConfig(models.Model):
    """One metric with one configuration (model, template, layer…).

    ``config_hash`` covers the metric name and every setting that changes the number, so
    scores from different models or templates never mix.
    """

    metric = models.CharField(max_length=64, help_text="Stable metric name, e.g. parapluie_fs_direct.")
    config = models.JSONField(default=dict)
    config_hash = models.CharField(max_length=64, unique=True)
    label = models.CharField(max_length=200, help_text="Display name, e.g. parapluie_fs_direct[SmolLM2-135M-Instruct].")
    higher_is_closer = models.BooleanField(default=True)
    natural_threshold = models.FloatField(null=True, blank=True)
    queue = models.CharField(max_length=20, default="cpu")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["metric", "id"]

    def __str__(self) -> str:
        return self.label


class Score(models.Model):
    """The score of one pair under one metric configuration, or why it failed."""

    class Status(models.TextChoices):
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    pair = models.ForeignKey("annotate.Pair", on_delete=models.CASCADE, related_name="scores")
    metric_config = models.ForeignKey(MetricConfig, on_delete=models.CASCADE, related_name="scores")
    value = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DONE)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["pair_id", "metric_config_id"]
        constraints = [
            models.UniqueConstraint(fields=["pair", "metric_config"], name="score_unique_pair_metric_config"),
            models.CheckConstraint(
                condition=models.Q(status="failed") | models.Q(value__isnull=False),
                name="score_done_has_value",
            ),
        ]
        indexes = [
            models.Index(fields=["metric_config", "status"], name="score_config_status_idx"),
            models.Index(fields=["computed_at"], name="score_computed_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.metric_config} on pair {self.pair_id}: {self.value if self.status == 'done' else 'failed'}"


class WorkerHeartbeat(models.Model):
    """Last sign of life of a Celery worker, for the staff status page (works on any broker)."""

    hostname = models.CharField(max_length=255, unique=True)
    queues = models.CharField(max_length=200, blank=True)
    pid = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    last_seen = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return self.hostname
