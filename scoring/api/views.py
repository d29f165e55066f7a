"""Viewsets of the scoring API: metric configurations, scores, and the dashboard's report."""

from __future__ import annotations

from typing import Any

from django.db.models import F, QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.models import Campaign
from scoring.analysis.service import FilterError, campaign_report
from scoring.api.filters import MetricConfigFilter, ScoreFilter
from scoring.api.serializers import MetricConfigSerializer, ReportQuerySerializer, ScoreSerializer
from scoring.models import MetricConfig, Score


@extend_schema_view(
    list=extend_schema(summary="List metric configurations"),
    retrieve=extend_schema(summary="One metric configuration"),
)
class MetricConfigViewSet(viewsets.ReadOnlyModelViewSet):
    """Each metric with one configuration (model, template…); scores never mix configurations."""

    serializer_class = MetricConfigSerializer
    filterset_class = MetricConfigFilter
    queryset = MetricConfig.objects.order_by("metric", "id")


@extend_schema_view(
    list=extend_schema(summary="List scores (by metric configuration, campaign, status…)"),
    retrieve=extend_schema(summary="One score"),
)
class ScoreViewSet(viewsets.ReadOnlyModelViewSet):
    """Scores of pairs under metric configurations, failed ones with their error."""

    serializer_class = ScoreSerializer
    filterset_class = ScoreFilter

    def get_queryset(self) -> QuerySet[Score]:
        return (
            Score.objects.select_related("metric_config")
            .annotate(campaign_slug=F("pair__campaign__slug"))
            .order_by("id")
        )


class CampaignReportView(APIView):
    """The agreement dashboard's analyses of one campaign, as JSON."""

    @extend_schema(
        summary="Agreement report of a campaign (the dashboard's tables)",
        parameters=[ReportQuerySerializer],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="The report the dashboard draws."),
            400: OpenApiResponse(description="A filter has a bad value (the body names it)."),
            404: OpenApiResponse(description="No campaign with this slug."),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        filters = ReportQuerySerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        options: dict[str, Any] = filters.validated_data
        try:
            report = campaign_report(
                campaign.id,
                reference=options["reference"],
                origin=options.get("origin"),
                english_level=options.get("english_level"),
                date_from=options.get("date_from"),
                date_to=options.get("date_to"),
                resamples=options.get("resamples"),
                seed=options.get("seed"),
            )
        except FilterError as error:  # the analysis names the filter: "<name>: <why>"
            name, _, message = str(error).partition(": ")
            raise ValidationError({name if message else "filters": message or str(error)}) from None
        return Response(report)
