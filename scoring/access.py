"""What of the scoring side a staff member sees: the metric configurations of their teams'
campaigns (the campaign rule itself is :mod:`annotate.teams`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from annotate.teams import campaigns_for
from scoring.models import MetricConfig, Score
from scoring.pipeline.status import StatusReport


def metric_configs_for(user: Any) -> QuerySet[MetricConfig]:
    """The metric configurations ``user`` may see: those with no score yet (the settings' metrics)
    and those that scored a pair of one of their campaigns. A configuration imported into another
    team's campaign (its name, its options) stays that team's."""
    if user.is_superuser:
        return MetricConfig.objects.all()
    scored = Score.objects.filter(metric_config=OuterRef("pk"))
    return MetricConfig.objects.filter(~Exists(scored) | Exists(scored.filter(pair__campaign__in=campaigns_for(user))))


def status_for(report: StatusReport, user: Any) -> StatusReport:
    """The workers' status as ``user`` may see it: the enabled metrics (the installation's, shared)
    and, of the configurations no longer enabled, those of their teams' campaigns."""
    if user.is_superuser:
        return report
    visible = set(metric_configs_for(user).values_list("pk", flat=True))
    kept = [config for config in report.configurations if config.enabled or config.id in visible]
    return replace(report, configurations=kept)
