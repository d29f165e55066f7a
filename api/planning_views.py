"""API of the campaign planner: interval width, power and cost per (pairs x judges)."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.teams import campaign_or_404
from api.filters import refuse_empty_parameters
from scoring.analysis.planning import PlanError, Question
from scoring.reports.planning import ALPHA_RANGE, MAX_FEE, MAX_NOISE, campaign_plan, parse_request

# 1 to 999,999 pairs; 1 to 25 judges; comma-separated, no spaces (the schema says so, the server too).
PAIRS = r"^[1-9][0-9]{0,5}(,[1-9][0-9]{0,5})*$"
JUDGES = r"^([1-9]|1[0-9]|2[0-5])(,([1-9]|1[0-9]|2[0-5]))*$"


class PlanQuerySerializer(serializers.Serializer[Any]):
    """The planner's query parameters, as the schema documents them."""

    question = serializers.ChoiceField(
        choices=[question.value for question in Question],
        required=False,
        help_text="auc (paired \u0394AUC of two metrics, default), correlation (difference of their Pearson r with "
        "the volunteers' scores) or clusters (every metric).",
    )
    metrics = serializers.CharField(
        required=False, max_length=500, help_text="Metric names or labels, comma-separated (clusters: all)."
    )
    noise = serializers.FloatField(
        required=False,
        min_value=0,
        max_value=MAX_NOISE,
        help_text="Flip probability of one judge (default: the pilot's).",
    )
    pairs = serializers.CharField(
        required=False,
        validators=[RegexValidator(PAIRS, "whole numbers from 1 to 999999, comma-separated")],
        help_text="Numbers of pairs, comma-separated (default 100,200,400,800 up to the pool).",
    )
    judges = serializers.CharField(
        required=False,
        validators=[RegexValidator(JUDGES, "whole numbers from 1 to 25, comma-separated")],
        help_text="Judges per pair, comma-separated (default 1,3,5).",
    )
    reward = serializers.FloatField(required=False, min_value=0, help_text="Payment per participant: adds the cost.")
    fee = serializers.FloatField(
        required=False, min_value=0, max_value=MAX_FEE, help_text="The platform's fee as a share of the reward."
    )
    alpha = serializers.FloatField(
        required=False, min_value=ALPHA_RANGE[0], max_value=ALPHA_RANGE[1], help_text="Level of the test (0.05)."
    )


class CampaignPlanView(APIView):
    """The planner: for the campaign's question, the predicted interval width, power and cost of
    each number of pairs and judges per pair (computed on the request, from the pool's scores)."""

    @extend_schema(
        summary="Plan a campaign's size: interval width, power and cost per pairs x judges",
        parameters=[PlanQuerySerializer],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="The grid, the assumptions and the method."),
            400: OpenApiResponse(description="A parameter that is wrong (named)."),
            404: OpenApiResponse(description="No campaign with this slug."),
            409: OpenApiResponse(
                description="The campaign cannot answer as it stands: a metric it has no scores of, more pairs than "
                "its pool, no noise given and no pilot to estimate it from (in words)."
            ),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        campaign = campaign_or_404(request.user, slug)
        names = list(PlanQuerySerializer().fields.keys())
        refuse_empty_parameters(request.query_params, names)
        PlanQuerySerializer(data=request.query_params).is_valid(raise_exception=True)
        try:
            plan_request = parse_request({name: request.query_params.get(name, "") for name in names})
        except PlanError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        try:
            result = campaign_plan(campaign, plan_request)
        except PlanError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        return Response(result.as_dict())
