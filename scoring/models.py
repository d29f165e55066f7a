"""Metric configurations and the scores they give each pair."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

# The queue name of imported configurations (scoring.external.score_import): no worker consumes it, nothing
# is ever sent to it.
EXTERNAL_QUEUE = "external"


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
    # "cpu", "llm" (embedding models) or "llm.<model>" (one queue per ParaPLUIE judge model).
    queue = models.CharField(max_length=64, default="cpu")
    # What rebuilds this configuration on a worker: a spec such as parapluie_fs_direct[model=mistral].
    spec = models.CharField(max_length=300, blank=True, default="")
    # The language of the campaigns whose pairs this configuration scores ("" for all):
    # a ParaPLUIE template is written for English or French pairs.
    language = models.CharField(max_length=8, blank=True, default="")
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
    # The task it runs now ("" when idle): a page that waits says what it waits behind.
    doing = models.CharField(max_length=200, blank=True, default="")
    doing_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return self.hostname


class QueuedScore(models.Model):
    """A (pair, configuration) score sent to a queue and not stored yet: the outstanding marker.

    Written when a message is sent (an answer, an import, the sweep) and deleted by the worker
    once it stored the score (or gave up on it). Dispatch never queues a score that has a
    marker, so a volunteer's answer after an import, or the sweep after a broker outage, does
    not pile duplicates in front of the work already queued. A marker whose message was lost
    (a worker killed on the embedded broker) is re-queued by the sweep once its queue is idle.

    Plain ids, not foreign keys: a marker is a hint, never joined for display, and a deleted
    pair's marker is dropped by the next sweep instead of making every pair deletion cascade.
    """

    pair_id = models.BigIntegerField()
    config_id = models.BigIntegerField()
    queued_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pair_id", "config_id"], name="queued_score_unique")]
        indexes = [models.Index(fields=["config_id", "queued_at"], name="queued_score_config_idx")]

    def __str__(self) -> str:
        return f"pair {self.pair_id}, configuration {self.config_id} queued at {self.queued_at:%Y-%m-%d %H:%M:%S}"


class ScoreAttempt(models.Model):
    """A (pair, configuration) score a worker started computing and has not stored yet.

    Written, in its own committed transaction, before a batch is computed, and deleted in the
    transaction that stores the batch's scores. A row found when the batch starts again is a
    computation that never ended: its worker process died (a plug-in that ends the process, a
    hard time limit, a kill). ``starts`` counts them, durably, whatever the broker redelivers:
    at ``PARAEVAL_METRIC_CRASH_BUDGET`` the score is stored as failed with the reason. Plain
    ids, like :class:`QueuedScore`: a hint the worker reads, never joined for display.
    """

    pair_id = models.BigIntegerField()
    config_id = models.BigIntegerField()
    starts = models.PositiveIntegerField(default=1)
    started_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pair_id", "config_id"], name="score_attempt_unique")]
        indexes = [models.Index(fields=["config_id", "pair_id"], name="score_attempt_config_idx")]

    def __str__(self) -> str:
        return f"pair {self.pair_id}, configuration {self.config_id}: started {self.starts} times"


class TunedJudge(models.Model):
    """One tuning of a judge model on a campaign's labels (``manage.py tune_judge``): the request,
    its progress while it runs, and what it produced.

    The adapters live in ``folder`` (under ``PARAPLUIE_TUNED_DIR``); the tuned judge is a judge
    model of its own named ``name`` (queue ``llm.<name>``) whose scores go to ``metric_config``.
    ``folds`` maps each training pair's id to its cross-fitting fold: the pair is scored by the
    adapter trained without that fold.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    campaign = models.ForeignKey(
        "annotate.Campaign", null=True, blank=True, on_delete=models.SET_NULL, related_name="tuned_judges"
    )
    reference = models.CharField(max_length=16, default="volunteers", help_text="volunteers (majority) or gold.")
    base_judge = models.CharField(max_length=64, help_text="The judge model tuned (PARAPLUIE_MODELS name).")
    template = models.CharField(max_length=64)
    options = models.JSONField(default=dict, help_text="The training settings.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    name = models.CharField(max_length=64, blank=True, help_text="The tuned judge's name (queue llm.<name>).")
    label = models.CharField(max_length=200, blank=True)
    folder = models.CharField(max_length=500, blank=True)
    progress = models.JSONField(default=dict, blank=True, help_text="Where training is: step, loss, validation AUC.")
    result = models.JSONField(default=dict, blank=True, help_text="How training went, adapter by adapter.")
    folds = models.JSONField(default=dict, blank=True, help_text="Training pair id -> cross-fitting fold.")
    metric_config = models.ForeignKey(
        MetricConfig, null=True, blank=True, on_delete=models.SET_NULL, related_name="tunings"
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.label or f"{self.base_judge} tuning #{self.pk} ({self.status})"


class GenerationRun(models.Model):
    """One request for candidate paraphrases (the generate page, ``generate_paraphrases``): its
    tasks and how far the workers are with them, so the page can show where each run stands.

    The tasks count themselves in (started, finished, failed) with ``F()`` increments. A task
    redelivered after a worker was killed counts twice: the counts shown are capped at ``tasks``.
    """

    campaign = models.ForeignKey("annotate.Campaign", on_delete=models.CASCADE, related_name="generation_runs")
    systems = models.TextField(help_text="The generators (template x model and settings), one a line.")
    queues = models.CharField(max_length=500, help_text="The model queues its tasks went to, comma-separated.")
    sources = models.PositiveIntegerField()
    tasks = models.PositiveIntegerField()
    tasks_started = models.PositiveIntegerField(default=0)
    tasks_done = models.PositiveIntegerField(default=0)
    tasks_failed = models.PositiveIntegerField(default=0)
    stored = models.PositiveIntegerField(default=0, help_text="Candidates stored as new pairs.")
    queued_at = models.DateTimeField(default=timezone.now)
    changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-queued_at", "-id"]

    def __str__(self) -> str:
        return f"generation run {self.pk} ({self.state})"

    @property
    def finished(self) -> int:
        return min(self.tasks_done + self.tasks_failed, self.tasks)

    @property
    def state(self) -> str:
        """queued (no task started), running, done, or failed (every task ended, some failed)."""
        if self.finished >= self.tasks:
            return "failed" if self.tasks_failed else "done"
        if self.tasks_started == 0:
            return "queued"
        return "running"


# A probe set's models live in their own module; imported here so Django registers them.
from scoring.probe_models import ProbePair, ProbeSet  # noqa: E402

__all__ = [
    "EXTERNAL_QUEUE",
    "GenerationRun",
    "MetricConfig",
    "ProbePair",
    "ProbeSet",
    "QueuedScore",
    "Score",
    "ScoreAttempt",
    "TunedJudge",
    "WorkerHeartbeat",
]


class StoppingRule(models.Model):
    """A campaign's question and its stopping rule (:mod:`scoring.analysis.sequential`).

    The question (the paired ROC AUC or Pearson r difference of two metrics) and alpha are fixed before the
    campaign's first judgement: :mod:`scoring.reports.stopping` refuses to change them after.
    ``settled_*`` is the record of the moment the always-valid interval first left 0 (written
    once, by the task that checks the rule after each judgement); ``closed_at`` when the rule
    closed the campaign (``close_when_settled``), and ``reason`` says why in words.
    """

    class Statistic(models.TextChoices):
        AUC = "auc", "ROC AUC against the volunteers' majority label"
        PEARSON = "pearson", "Pearson r against the volunteers' mean answer (1-4)"

    class Method(models.TextChoices):
        CONFIDENCE_SEQUENCE = "confidence_sequence", "Always-valid confidence sequence (decides at every judgement)"
        GROUP_SEQUENTIAL = "group_sequential", "Group-sequential O'Brien-Fleming plan (decides at planned looks)"

    campaign = models.OneToOneField("annotate.Campaign", on_delete=models.CASCADE, related_name="stopping_rule")
    statistic = models.CharField(max_length=10, choices=Statistic.choices, default=Statistic.AUC)
    metric_a = models.ForeignKey(MetricConfig, on_delete=models.PROTECT, related_name="+")
    metric_b = models.ForeignKey(MetricConfig, on_delete=models.PROTECT, related_name="+")
    alpha = models.FloatField(default=0.05, help_text="The error rate kept however often the dashboard is read.")
    planned_pairs = models.PositiveIntegerField(
        default=1000, help_text="Labelled pairs planned: the interval is tightest there (validity never depends on it)."
    )
    method = models.CharField(
        max_length=20,
        choices=Method.choices,
        default=Method.CONFIDENCE_SEQUENCE,
        help_text="How the question is decided: at every judgement, or only at the planned looks.",
    )
    looks = models.PositiveSmallIntegerField(
        default=5, help_text="The group-sequential plan's looks, at equal shares of its maximum size."
    )
    close_when_settled = models.BooleanField(
        default=False, help_text="Close the campaign by itself once the question is settled."
    )
    updated_at = models.DateTimeField(auto_now=True)
    settled_at = models.DateTimeField(null=True, blank=True, help_text="When the task saw the question settled.")
    settled_judgements = models.PositiveIntegerField(null=True, blank=True)
    settled_pairs = models.PositiveIntegerField(null=True, blank=True)
    settled_difference = models.FloatField(null=True, blank=True, help_text="AUC(A) - AUC(B) when it settled.")
    settled_low = models.FloatField(null=True, blank=True)
    settled_high = models.FloatField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True, help_text="When the rule closed the campaign.")
    reason = models.CharField(max_length=400, blank=True, default="")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(metric_a=models.F("metric_b")), name="stopping_rule_two_metrics"
            ),
            models.CheckConstraint(
                condition=models.Q(alpha__gt=0) & models.Q(alpha__lt=0.5), name="stopping_rule_alpha_range"
            ),
        ]

    def __str__(self) -> str:
        return f"stopping rule of campaign {self.campaign_id}"


class ScoreTally(models.Model):
    """Done and failed scores of one metric configuration on one campaign's scorable pairs (every
    pair but the training ones), kept by the database: the migration ``score_tallies_kept_by_triggers``
    adds triggers on the scores table (inserts, deletes, a status that changes) so that the
    status page reads a handful of rows instead of counting every score.

    One row per (campaign, configuration), not striped as the campaign tallies are: its writers
    are scoring workers storing a batch of pairs in a short transaction (the insert, then the
    queue markers cleared, then commit, after the model has spent seconds computing), so the
    row is locked for milliseconds per batch; and a batch spans many pairs, so stripes chosen
    from the pair would all be taken by every batch anyway."""

    campaign = models.ForeignKey("annotate.Campaign", on_delete=models.CASCADE, related_name="score_tallies")
    metric_config = models.ForeignKey(MetricConfig, on_delete=models.CASCADE, related_name="tallies")
    done = models.BigIntegerField(default=0)
    failed = models.BigIntegerField(default=0)
    changes = models.BigIntegerField(
        db_default=0, help_text="Scores written (inserted, updated, deleted): the dashboard's fingerprint."
    )
    changed_at = models.DateTimeField(blank=True, null=True, help_text="When a score was last written.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "metric_config"], name="one_score_tally_per_campaign_config")
        ]

    def __str__(self) -> str:
        return f"{self.campaign_id}/{self.metric_config_id}: {self.done} done, {self.failed} failed"
