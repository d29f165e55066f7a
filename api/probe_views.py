"""API of probe sets: each metric's robustness card on a campaign's probe set, with a sample of each probe kind."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.teams import campaign_or_404
from scoring.probes.build import BUILDABLE
from scoring.probes.requests import ProbeSetError, parse_kinds, queue_probe_set
from scoring.reports.robustness import probe_samples, probe_set_for, robustness_cards, robustness_dict

SAMPLES_PER_KIND = 5
MAX_SAMPLES_PER_KIND = 50


def _whole(value: str | None, name: str, default: int, maximum: int) -> int | str:
    """A whole number from a query parameter, or the message naming what is wrong."""
    if value in (None, ""):
        return default
    if not value.isdigit() or int(value) > maximum:
        return f"{name}: a whole number from 0 to {maximum}, got {value!r}"
    return int(value)


class CampaignRobustnessView(APIView):
    """Robustness card of every metric on the campaign's probe set (the campaign itself if it is one)."""

    @extend_schema(
        summary="Robustness cards of a campaign's metrics on its probe set",
        parameters=[
            OpenApiParameter(
                "resamples", int, description="Bootstrap resamples (default PARAEVAL_BOOTSTRAP_RESAMPLES)."
            ),
            OpenApiParameter("samples", int, description=f"Probe pairs shown per kind (default {SAMPLES_PER_KIND})."),
            OpenApiParameter("metrics", str, description="Comma-separated configuration labels or metric names."),
        ],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="Cards, what each figure means, samples."),
            400: OpenApiResponse(description="A parameter out of range (named)."),
            404: OpenApiResponse(description="No campaign with this slug, or no probe set built from it."),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        campaign = campaign_or_404(request.user, slug)
        resamples = _whole(
            request.query_params.get("resamples"),
            "resamples",
            settings.PARAEVAL_BOOTSTRAP_RESAMPLES,
            settings.PARAEVAL_MAX_RESAMPLES,
        )
        per_kind = _whole(request.query_params.get("samples"), "samples", SAMPLES_PER_KIND, MAX_SAMPLES_PER_KIND)
        for name, value in (("resamples", resamples), ("samples", per_kind)):
            if isinstance(value, str):
                return Response({name: [value]}, status=status.HTTP_400_BAD_REQUEST)
        probe_set = probe_set_for(campaign)
        if probe_set is None:
            return Response(
                {"detail": f"campaign {slug!r} has no probe set: build one with manage.py build_probes"},
                status=status.HTTP_404_NOT_FOUND,
            )
        labels = [name.strip() for name in request.query_params.get("metrics", "").split(",") if name.strip()]
        cards = robustness_cards(
            probe_set, resamples=int(resamples), seed=settings.PARAEVAL_SEED, labels=labels or None
        )
        return Response(robustness_dict(probe_set, cards, probe_samples(probe_set, int(per_kind))))


class ProbeRequestSerializer(serializers.Serializer[Any]):
    kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=[kind.value for kind in BUILDABLE]),
        required=False,
        default=list,
        help_text="Probe kinds to build (default all).",
    )
    origin = serializers.CharField(required=False, default="", allow_blank=True, max_length=100)
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**31 - 1, allow_null=True, default=None)


class CampaignProbesView(APIView):
    """Build a probe set from the campaign's pairs, on the ``cpu`` queue."""

    parser_classes = [JSONParser]

    @extend_schema(
        summary="Queue the building of a probe set from a campaign's pairs",
        request=ProbeRequestSerializer,
        responses={
            202: OpenApiResponse(OpenApiTypes.OBJECT, description="Queued: the request's key."),
            400: OpenApiResponse(description="A bad field (named)."),
            404: OpenApiResponse(description="No campaign with this slug."),
            409: OpenApiResponse(
                description="The campaign cannot give probes as it stands: it is a probe set itself, or it has no "
                "pairs (of that origin)."
            ),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        campaign = campaign_or_404(request.user, slug)
        body = ProbeRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        values = body.validated_data
        seed = settings.PARAEVAL_SEED if values["seed"] is None else values["seed"]
        try:
            key = queue_probe_set(campaign, kinds=parse_kinds(values["kinds"]), seed=seed, origin=values["origin"])
        except ProbeSetError as error:
            return Response({"campaign": [str(error)]}, status=status.HTTP_409_CONFLICT)
        return Response({"queued": True, "request": key, "seed": seed}, status=status.HTTP_202_ACCEPTED)
