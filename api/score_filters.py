"""Query-string filters of the scoring API."""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet

from annotate.models import Campaign
from api.filters import CampaignSlugFilter, IdFilter, StrictChoiceFilter, TextFilter
from scoring.models import MetricConfig, Score
from scoring.tallies import scored_configs


class MetricConfigFilter(django_filters.FilterSet):
    metric = TextFilter(help_text="Metric name, e.g. parapluie_fs_direct.")
    campaign = CampaignSlugFilter(method="filter_campaign")

    class Meta:
        model = MetricConfig
        fields = ["metric", "campaign"]

    def filter_campaign(self, queryset: QuerySet[MetricConfig], name: str, value: Campaign) -> QuerySet[MetricConfig]:
        """Configurations that scored at least one pair of the campaign."""
        return queryset.filter(pk__in=scored_configs(value).values("pk"))


class ScoreFilter(django_filters.FilterSet):
    campaign = CampaignSlugFilter(field_name="pair__campaign")
    pair = IdFilter(field_name="pair_id", help_text="Pair id.")
    metric_config = TextFilter(
        method="filter_metric_config",
        help_text="Metric configuration: its config_hash or its label "
        "(e.g. parapluie_fs_direct[SmolLM2-135M-Instruct]).",
    )
    metric = TextFilter(field_name="metric_config__metric", help_text="Metric name, e.g. lev.")
    status = StrictChoiceFilter(choices=Score.Status.choices)

    class Meta:
        model = Score
        fields = ["campaign", "pair", "metric_config", "metric", "status"]

    def filter_metric_config(self, queryset: QuerySet[Score], name: str, value: str) -> QuerySet[Score]:
        return queryset.filter(Q(metric_config__config_hash=value) | Q(metric_config__label=value))
