"""Viewsets of the annotate API: thin wrappers around querysets, the importer and the exports."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.exports.http import export_response
from annotate.exports.service import build_export
from annotate.importers import ImportRefused, import_records
from annotate.models import Campaign, Judgement, Pair
from annotate.teams import TeamError, campaign_or_404, team_for_new_campaign, visible_to
from api.filters import JudgementFilter, PairFilter, refuse_empty_parameters
from api.queries import campaigns_with_counts, judgements_for_api, pairs_for_api
from api.serializers import (
    CampaignSerializer,
    ExportQuerySerializer,
    FieldErrorsSerializer,
    ImportReportSerializer,
    JudgementSerializer,
    PairBulkCreateSerializer,
    PairImportErrorSerializer,
    PairSerializer,
    problem_payload,
)

# Bodies the API docs pre-fill ("Try it out"): a request that works on the demo campaign,
# instead of the random strings a generator makes from the schema.
CAMPAIGN_EXAMPLE = OpenApiExample(
    "A new campaign",
    value={"slug": "my-campaign", "name": "My campaign", "quota": 50, "judges_per_pair": 3},
    request_only=True,
)
PAIRS_EXAMPLE = OpenApiExample(
    "Two pairs, checked only (dry run)",
    value={
        "campaign": "demo",
        "dry_run": True,
        "pairs": [
            {
                "id": "mrpc-1",
                "source": "The company said profits rose 5% in the first quarter.",
                "hypothesis": "Profits grew by 5% in the first quarter, the company said.",
                "label": 1,
            },
            {
                "id": "mrpc-2",
                "source": "The storm closed schools across the region on Monday.",
                "hypothesis": "Schools in the region reopened on Monday after the storm.",
                "label": 0,
                "system": "llm-a",
            },
        ],
    },
    request_only=True,
)


@extend_schema_view(
    list=extend_schema(summary="List campaigns"),
    retrieve=extend_schema(summary="One campaign"),
)
class CampaignViewSet(
    mixins.ListModelMixin, mixins.CreateModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Campaign]
):
    """Campaigns, by slug, with their numbers of pairs, volunteers and judgements."""

    serializer_class = CampaignSerializer
    lookup_field = "slug"
    # Any text up to the next "/" reaches the view, so a malformed id or slug is DRF's JSON 404,
    # not Django's HTML page for an unmatched URL.
    lookup_value_regex = "[^/]+"

    def get_queryset(self) -> QuerySet[Campaign]:
        return (
            visible_to(campaigns_with_counts(), self.request.user, "pk")
            .select_related("team")
            .order_by("-created_at", "-id")
        )

    @extend_schema(
        summary="Create a campaign",
        examples=[CAMPAIGN_EXAMPLE],
        responses={
            201: CampaignSerializer,
            404: OpenApiResponse(FieldErrorsSerializer, description="No team of yours with this name."),
            409: OpenApiResponse(FieldErrorsSerializer, description="The slug is taken."),
        },
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            # A slug that is taken conflicts with the campaigns that exist, and a team that is not
            # the caller's is not found (as another team's campaign): well-formed requests.
            errors: dict[str, Any] = dict(serializer.errors)
            taken = [error.code for error in errors.get("slug", [])] == ["unique"]
            unknown_team = [error.code for error in errors.get("team", [])] == ["does_not_exist"]
            refusal: int = status.HTTP_400_BAD_REQUEST
            if len(errors) == 1 and (taken or unknown_team):
                refusal = status.HTTP_409_CONFLICT if taken else status.HTTP_404_NOT_FOUND
            return Response(errors, status=refusal)
        try:  # no team named: the caller's only team (a superuser's: none)
            team = serializer.validated_data.get("team") or team_for_new_campaign(request.user, None)
        except TeamError as error:
            return Response({"team": [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
        campaign = serializer.save(team=team)
        return Response(self._fresh(campaign), status=status.HTTP_201_CREATED)

    def _fresh(self, campaign: Campaign) -> dict[str, Any]:
        """The campaign as the list shows it (counts included)."""
        data: dict[str, Any] = self.get_serializer(self.get_queryset().get(pk=campaign.pk)).data
        return data

    def _set_open(self, is_open: bool) -> Response:
        campaign = self.get_object()
        if campaign.is_open != is_open:
            campaign.is_open = is_open
            campaign.save(update_fields=["is_open"])
        return Response(self._fresh(campaign))

    @extend_schema(request=None, summary="Open a campaign to new volunteers")
    @action(detail=True, methods=["post"])
    def open(self, request: Request, slug: str) -> Response:
        return self._set_open(True)

    @extend_schema(request=None, summary="Close a campaign to new volunteers")
    @action(detail=True, methods=["post"])
    def close(self, request: Request, slug: str) -> Response:
        return self._set_open(False)


@extend_schema_view(
    list=extend_schema(summary="List pairs"),
    retrieve=extend_schema(summary="One pair"),
)
class PairViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Pair]):
    """Pairs of every campaign; ``POST`` imports many at once through the importer."""

    serializer_class = PairSerializer
    filterset_class = PairFilter
    # Any text up to the next "/" reaches the view, so a malformed id or slug is DRF's JSON 404,
    # not Django's HTML page for an unmatched URL.
    lookup_value_regex = "[^/]+"
    parser_classes = [JSONParser]

    def get_queryset(self) -> QuerySet[Pair]:
        return visible_to(pairs_for_api(), self.request.user)

    @extend_schema(
        summary="Import pairs (all or nothing)",
        examples=[PAIRS_EXAMPLE],
        request=PairBulkCreateSerializer,
        responses={
            201: ImportReportSerializer,
            200: ImportReportSerializer,
            400: OpenApiResponse(
                PairImportErrorSerializer,
                description="Refused records (`problems`, nothing stored) or a malformed body (field errors).",
            ),
            404: OpenApiResponse(FieldErrorsSerializer, description="No campaign with this slug."),
        },
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = PairBulkCreateSerializer(data=request.data, context={"request": request})
        if not body.is_valid():
            missing = [error.code for error in body.errors.get("campaign", [])] == ["does_not_exist"]
            answer = status.HTTP_404_NOT_FOUND if missing and len(body.errors) == 1 else status.HTTP_400_BAD_REQUEST
            return Response(body.errors, status=answer)
        try:
            report = import_records(
                body.validated_data["campaign"],
                body.validated_data["pairs"],
                format_name="json",
                origin=body.validated_data["origin"],
                dry_run=body.validated_data["dry_run"],
                options=body.validated_data["options"],
            )
        except ImportRefused as refused:
            return Response(problem_payload(refused.problems, count=refused.count), status=status.HTTP_400_BAD_REQUEST)
        stored = status.HTTP_200_OK if report.dry_run else status.HTTP_201_CREATED
        return Response(ImportReportSerializer(asdict(report)).data, status=stored)


@extend_schema_view(
    list=extend_schema(summary="List judgements (read-only)"),
    retrieve=extend_schema(summary="One judgement"),
)
class JudgementViewSet(viewsets.ReadOnlyModelViewSet[Judgement]):
    """Volunteers' answers; volunteers appear as pseudonyms. Judgements are never written here."""

    serializer_class = JudgementSerializer
    filterset_class = JudgementFilter
    # Any text up to the next "/" reaches the view, so a malformed id or slug is DRF's JSON 404,
    # not Django's HTML page for an unmatched URL.
    lookup_value_regex = "[^/]+"

    def get_queryset(self) -> QuerySet[Judgement]:
        return visible_to(judgements_for_api(), self.request.user, "pair__campaign")


class JSONOnlyNegotiation(BaseContentNegotiation):
    """Always JSON for what DRF renders: ``?format=`` picks the export's format, not a renderer."""

    def select_parser(self, request: Request, parsers: Iterable[Any]) -> Any:
        return next(iter(parsers), None)

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


class CampaignExportView(APIView):
    """A campaign's labelled corpus, streamed (same rows as ``manage.py export_corpus``)."""

    renderer_classes = [JSONRenderer]
    content_negotiation_class = JSONOnlyNegotiation

    @extend_schema(
        summary="Export a campaign (streamed CSV or JSON Lines)",
        parameters=[
            OpenApiParameter("level", enum=["pairs", "judgements"], default="pairs"),
            OpenApiParameter("format", enum=["csv", "jsonl"], default="csv"),
        ],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV with a header row."),
            (200, "application/x-ndjson"): OpenApiResponse(OpenApiTypes.STR, description="One JSON object a line."),
            400: OpenApiResponse(description="Unknown or empty level or format (the body names the parameter)."),
            404: OpenApiResponse(description="No campaign with this slug."),
        },
    )
    def get(self, request: Request, slug: str) -> HttpResponseBase:
        campaign = campaign_or_404(request.user, slug)
        # DRF reads ?format= (empty) as "the default"; the schema's enum does not allow it.
        refuse_empty_parameters(request.query_params, ExportQuerySerializer().fields)
        options = ExportQuerySerializer(data=request.query_params)
        options.is_valid(raise_exception=True)
        return export_response(
            build_export(
                campaign,
                options.validated_data["level"],
                options.validated_data["format"],
            )
        )
