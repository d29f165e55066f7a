"""Viewsets of the scoring API: metric configurations, scores, and the dashboard's report."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.db.models import F, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.teams import campaign_or_404, visible_to
from api.filters import refuse_empty_parameters
from api.score_filters import MetricConfigFilter, ScoreFilter
from api.score_serializers import (
    CampaignReportQuerySerializer,
    MetricConfigSerializer,
    ReportQuerySerializer,
    ScoreImportResultSerializer,
    ScoreImportSerializer,
    ScoreSerializer,
)
from scoring.access import metric_configs_for
from scoring.external.score_import import ScoreFileMetric, ScoreImportError, import_scores, parse_direction
from scoring.models import MetricConfig, Score
from scoring.reports.dataset import Filters
from scoring.reports.service import FilterError, campaign_report, meta_status


@extend_schema_view(
    list=extend_schema(summary="List metric configurations"),
    retrieve=extend_schema(summary="One metric configuration"),
)
class MetricConfigViewSet(viewsets.ReadOnlyModelViewSet[MetricConfig]):
    """Each metric with one configuration (model, template…); scores never mix configurations."""

    # Any text up to the next "/" reaches the view, so a malformed id or slug is DRF's JSON 404,
    # not Django's HTML page for an unmatched URL.
    lookup_value_regex = "[^/]+"

    serializer_class = MetricConfigSerializer
    filterset_class = MetricConfigFilter

    def get_queryset(self) -> QuerySet[MetricConfig]:
        return metric_configs_for(self.request.user).order_by("metric", "id")


@extend_schema_view(
    list=extend_schema(summary="List scores (by metric configuration, campaign, status…)"),
    retrieve=extend_schema(summary="One score"),
)
class ScoreViewSet(viewsets.ReadOnlyModelViewSet[Score]):
    """Scores of pairs under metric configurations, failed ones with their error."""

    # Any text up to the next "/" reaches the view, so a malformed id or slug is DRF's JSON 404,
    # not Django's HTML page for an unmatched URL.
    lookup_value_regex = "[^/]+"

    serializer_class = ScoreSerializer
    filterset_class = ScoreFilter

    def get_queryset(self) -> QuerySet[Score]:
        scores = Score.objects.select_related("metric_config").annotate(campaign_slug=F("pair__campaign__slug"))
        return visible_to(scores, self.request.user, "pair__campaign").order_by("id")


T = TypeVar("T")


def _with_report_filters(
    request: Request,
    slug: str,
    analysis: Callable[..., T],
    query: type[ReportQuerySerializer] = ReportQuerySerializer,
) -> T:
    """Run ``analysis`` (the report or the meta-evaluation) on a campaign with the checked filters
    (``query``: the serializer of the query; the report's adds ``two_way``, passed on).

    A bad filter is a 400 naming it (the analysis says "<name>: <why>").
    """
    campaign = campaign_or_404(request.user, slug)
    refuse_empty_parameters(request.query_params, query().fields)
    filters = query(data=request.query_params)
    filters.is_valid(raise_exception=True)
    options: dict[str, Any] = filters.validated_data
    try:
        checked = Filters.build(
            reference=options["reference"],
            origin=options.get("origin"),
            english_level=options.get("english_level"),
            date_from=options.get("date_from"),
            date_to=options.get("date_to"),
            exclude_flagged=options["exclude_flagged"],
        )
        extra = {"two_way": options["two_way"]} if "two_way" in options else {}
        return analysis(
            campaign.id, filters=checked, resamples=options.get("resamples"), seed=options.get("seed"), **extra
        )
    except FilterError as error:
        name, _, message = str(error).partition(": ")
        raise ValidationError({name if message else "filters": message or str(error)}) from None


class CampaignReportView(APIView):
    """The agreement dashboard's analyses of one campaign, as JSON."""

    @extend_schema(
        summary="Agreement report of a campaign (the dashboard's tables)",
        parameters=[CampaignReportQuerySerializer],
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="The report the dashboard draws, with its cards: each metric's robustness on the "
                "campaign's probe set and ParaPLUIE's calibration with a cross-fitted temperature.",
            ),
            400: OpenApiResponse(description="A filter has a bad value (the body names it)."),
            404: OpenApiResponse(description="No campaign with this slug."),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(_with_report_filters(request, slug, campaign_report, CampaignReportQuerySerializer).as_json())


class CampaignMetaEvaluationView(APIView):
    """Which metric to trust: paired tests, clusters, thresholds, ties, systems, ceiling, calibration.

    Computed on the ``cpu`` queue and cached by data version: ``202`` with ``state: computing``
    until it is ready, then ``200`` with ``state: ready`` and ``meta``.
    """

    @extend_schema(
        summary="Meta-evaluation of a campaign's metrics (paired significance tests and more)",
        parameters=[ReportQuerySerializer],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="Ready: ``meta`` holds the result."),
            202: OpenApiResponse(OpenApiTypes.OBJECT, description="Queued or computing; ask again."),
            400: OpenApiResponse(description="A filter has a bad value (the body names it)."),
            404: OpenApiResponse(description="No campaign with this slug."),
            503: OpenApiResponse(description="The task queue is unreachable."),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        status = _with_report_filters(request, slug, meta_status)
        body: dict[str, Any] = {"state": status.state, "version": status.version, "message": status.message}
        if status.result is not None:
            body["meta"] = status.result.as_json()
        if status.wait is not None:
            body["wait"] = status.wait.as_dict()
        code = {"ready": 200, "computing": 202}.get(status.state, 503)
        return Response(body, status=code)


class ScoreImportView(APIView):
    """Import a file of precomputed scores as an external metric configuration (all or nothing)."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        summary="Import precomputed scores of your metric (all or nothing)",
        request={"multipart/form-data": ScoreImportSerializer},
        responses={
            201: ScoreImportResultSerializer,
            200: OpenApiResponse(ScoreImportResultSerializer, description="The same file was imported before."),
            400: OpenApiResponse(
                description="`problems`: the first 50 problems with their line, `problem_count`: all; nothing stored."
            ),
            404: OpenApiResponse(description="No campaign with this slug."),
        },
    )
    def post(self, request: Request) -> Response:
        body = ScoreImportSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        campaign = campaign_or_404(request.user, data["campaign"])
        upload = data["file"]
        metric = ScoreFileMetric(
            name=data["name"],
            version=data["version"],
            higher_is_closer=parse_direction(data["direction"]),
            natural_threshold=data.get("threshold"),
            options=data.get("options") or {},
        )
        try:
            result = import_scores(campaign, upload.read(), upload.name or "", metric)
        except ScoreImportError as error:
            problems = [{"line": problem.line, "message": problem.message} for problem in error.problems]
            detail = "nothing stored"
            if error.more:
                detail += f"; the first {len(problems)} problems of {error.total:,} are listed"
            return Response({"problems": problems, "problem_count": error.total, "detail": detail}, status=400)
        return Response(result.as_dict(), status=201 if result.created else 200)
