"""API of the PARAPHRASUS objectives: each corpus's objective (read and set) and the error table."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.models import Campaign
from annotate.teams import campaign_or_404
from scoring.reports.paraphrasus import (
    ObjectiveError,
    campaign_origins,
    campaign_paraphrasus,
    objectives,
    report_dict,
    set_objectives,
)

# Most corpora one request may name (a campaign has a handful).
MAX_OBJECTIVES = 200


class ObjectivesSerializer(serializers.Serializer[Any]):
    objectives = serializers.DictField(
        child=serializers.ChoiceField(choices=["classify", "minimise", "maximise"], allow_null=True),
        help_text="origin -> classify, minimise or maximise (null removes the corpus's objective); "
        "an empty object changes nothing.",
    )

    def validate_objectives(self, value: dict[str, Any]) -> dict[str, Any]:
        if len(value) > MAX_OBJECTIVES:
            raise serializers.ValidationError(f"at most {MAX_OBJECTIVES} corpora")
        return value


def _listing(campaign: Campaign) -> dict[str, Any]:
    stored = objectives(campaign)
    return {
        "campaign": campaign.slug,
        "objectives": {
            origin: (stored[origin].value if origin in stored else None) for origin in campaign_origins(campaign)
        },
    }


class CampaignObjectivesView(APIView):
    """The PARAPHRASUS objective of each corpus (origin) of a campaign."""

    # JSON only: a form or multipart body has no way to carry the origin -> objective object
    # (DRF read it as an empty object and answered 200 to a body it had ignored); now a 415.
    parser_classes = [JSONParser]

    @extend_schema(
        summary="Objectives of a campaign's corpora (PARAPHRASUS)",
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="origin -> objective or null."),
            404: OpenApiResponse(description="No campaign with this slug."),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(_listing(campaign_or_404(request.user, slug)))

    @extend_schema(
        summary="Set objectives of a campaign's corpora (all or nothing)",
        request=ObjectivesSerializer,
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="Every corpus and its objective after the change."),
            400: OpenApiResponse(description="A malformed body or objective (the body names it)."),
            404: OpenApiResponse(description="No campaign with this slug, or no pairs of a named origin in it."),
        },
    )
    def put(self, request: Request, slug: str) -> Response:
        campaign = campaign_or_404(request.user, slug)
        body = ObjectivesSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            set_objectives(campaign, body.validated_data["objectives"])
        except ObjectiveError as error:
            code = status.HTTP_404_NOT_FOUND if error.unknown else status.HTTP_400_BAD_REQUEST
            return Response({"objectives": [str(error)]}, status=code)
        return Response(_listing(campaign))


class CampaignParaphrasusView(APIView):
    """Each metric as a paraphrase detector on the campaign's corpora (PARAPHRASUS error rates)."""

    @extend_schema(
        summary="PARAPHRASUS error rates of a campaign's metrics",
        parameters=[
            OpenApiParameter(
                "fit_on", str, description="Corpus whose labels fit thresholds (default: largest classify)."
            ),
            OpenApiParameter("metrics", str, description="Comma-separated configuration labels or metric names."),
        ],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="Corpora, per-metric errors and the table."),
            404: OpenApiResponse(description="No campaign with this slug, or an unknown corpus or metric (named)."),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        campaign = campaign_or_404(request.user, slug)
        fit_on = request.query_params.get("fit_on") or None
        metrics = [name.strip() for name in request.query_params.get("metrics", "").split(",") if name.strip()]
        try:
            report = campaign_paraphrasus(campaign, fit_on=fit_on, metrics=metrics)
        except ObjectiveError as error:
            name = "fit_on" if fit_on and "fit on" in str(error) else "metrics"
            code = status.HTTP_404_NOT_FOUND if error.unknown else status.HTTP_400_BAD_REQUEST
            return Response({name: [str(error)]}, status=code)
        return Response(report_dict(report))
