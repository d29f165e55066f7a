"""Serializers of the scoring API."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotate.labels import ENGLISH_LEVEL_ORDER
from scoring.models import MetricConfig, Score


class MetricConfigSerializer(serializers.ModelSerializer[MetricConfig]):
    class Meta:
        model = MetricConfig
        fields = [
            "id",
            "metric",
            "label",
            "config",
            "config_hash",
            "higher_is_closer",
            "natural_threshold",
            "queue",
            "created_at",
        ]
        read_only_fields = fields


class ScoreSerializer(serializers.ModelSerializer[Score]):
    campaign = serializers.CharField(source="campaign_slug", read_only=True, help_text="Campaign slug.")
    metric_config = serializers.CharField(source="metric_config.config_hash", read_only=True)
    metric = serializers.CharField(source="metric_config.metric", read_only=True)
    metric_label = serializers.CharField(source="metric_config.label", read_only=True)

    class Meta:
        model = Score
        fields = [
            "id",
            "campaign",
            "pair",
            "metric_config",
            "metric",
            "metric_label",
            "value",
            "status",
            "error",
            "attempts",
            "computed_at",
        ]
        read_only_fields = fields


class ReportQuerySerializer(serializers.Serializer[Any]):
    """The dashboard's filters, as query parameters."""

    reference = serializers.ChoiceField(
        choices=["volunteers", "gold"],
        default="volunteers",
        help_text="Human labels to compare with: the volunteers' (majority) or the imported gold labels.",
    )
    origin = serializers.CharField(required=False, allow_blank=False, help_text="Only pairs of this origin.")
    english_level = serializers.ChoiceField(
        choices=[level.value for level in ENGLISH_LEVEL_ORDER],
        required=False,
        help_text="Only judgements of volunteers with this English level.",
    )
    date_from = serializers.DateField(required=False, help_text="Only judgements answered on or after this day.")
    date_to = serializers.DateField(
        required=False,
        help_text="Only judgements answered on or before this day; not before date_from (a 400 says so).",
    )
    resamples = serializers.IntegerField(
        required=False,
        min_value=0,
        # The schema's maximum; the report service checks the setting again at each request.
        max_value=settings.PARAEVAL_MAX_RESAMPLES,
        error_messages={"max_value": "At most {max_value} resamples (PARAEVAL_MAX_RESAMPLES)."},
        help_text=(
            "Bootstrap resamples of the confidence intervals (default PARAEVAL_BOOTSTRAP_RESAMPLES; 0: none; "
            "at most PARAEVAL_MAX_RESAMPLES)."
        ),
    )
    seed = serializers.IntegerField(
        required=False,
        min_value=0,
        help_text="Seed of every resampling (default: the PARAEVAL_SEED setting, as on the dashboard and the command "
        "line).",
    )
    exclude_flagged = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Leave out the volunteers the campaign's quality rule flags (unless staff kept them) and those "
        "staff excluded (1 / 0).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("date_from"), attrs.get("date_to")
        if start and end and start > end:
            raise serializers.ValidationError({"date_to": f"date_to ({end}) is before date_from ({start})."})
        return attrs


class CampaignReportQuerySerializer(ReportQuerySerializer):
    """The report's query: the filters, and whether to compute the two-way intervals."""

    two_way = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Also the intervals that resample the volunteers as well as the pairs (results[metric][corpus]"
        ".raters.two_way; 1 / 0). Off by default: they cost several times the pairs-only ones; the dashboard "
        "computes them in the background.",
    )


@extend_schema_field({"type": "string", "format": "binary"})
class UploadField(serializers.FileField):
    """A file uploaded in a multipart form (binary in the OpenAPI document, not a URL)."""


class ScoreImportSerializer(serializers.Serializer[Any]):
    """``POST /api/scores/import/`` (multipart): a score file and what is given once for it."""

    campaign = serializers.SlugField(help_text="Slug of the campaign whose pairs the file scores.")
    file = UploadField(help_text="CSV (header: pair_id or external_id, score) or JSONL, UTF-8.")
    name = serializers.RegexField(
        r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$", max_length=64, help_text="The metric's name, e.g. my_metric."
    )
    version = serializers.RegexField(r"^\S(.{0,62}\S)?$", max_length=64, help_text="The metric's version, e.g. 1.0.")
    direction = serializers.ChoiceField(
        choices=["higher", "lower", "↑", "↓"], default="higher", help_text="higher (↑) or lower (↓) is closer."
    )
    threshold = serializers.FloatField(required=False, allow_null=True, help_text="Natural threshold, if any.")
    options = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=10000,
        help_text='The metric\'s settings as a JSON object, e.g. {"model": "x"}; part of its signature.',
    )

    def validate_options(self, value: str) -> dict[str, object]:
        from scoring.external.score_import import parse_options

        try:
            return parse_options(value)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None


class ScoreImportResultSerializer(serializers.Serializer[Any]):
    metric_config = serializers.IntegerField()
    config_hash = serializers.CharField()
    metric = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label
    created = serializers.BooleanField(help_text="False: the same file was imported before; nothing changed.")
    scores = serializers.IntegerField(help_text="Scores stored by this request.")
