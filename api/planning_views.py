"""API of the campaign planner: interval width, power and cost per (pairs x judges)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.teams import campaign_or_404
from scoring.analysis.planning import PlanError
from scoring.reports.planning import campaign_plan, parse_request

NAMES = ("question", "metrics", "noise", "pairs", "judges", "reward", "fee", "alpha")


class CampaignPlanView(APIView):
    """The planner: for the campaign's question, the predicted interval width, power and cost of
    each number of pairs and judges per pair (computed on the request, from the pool's scores)."""

    @extend_schema(
        summary="Plan a campaign's size: interval width, power and cost per pairs x judges",
        parameters=[
            OpenApiParameter(
                "question",
                str,
                enum=["auc", "correlation", "clusters"],
                description="auc (paired \u0394AUC of two metrics, default), correlation (difference of their "
                "Pearson r with the volunteers' scores) or clusters (every metric).",
            ),
            OpenApiParameter("metrics", str, description="Metric names or labels, comma-separated (clusters: all)."),
            OpenApiParameter("noise", float, description="Flip probability of one judge (default: the pilot's)."),
            OpenApiParameter("pairs", str, description="Numbers of pairs, comma-separated (default 100,200,400,800)."),
            OpenApiParameter("judges", str, description="Judges per pair, comma-separated (default 1,3,5)."),
            OpenApiParameter("reward", float, description="Payment per participant: adds each cell's cost."),
            OpenApiParameter("fee", float, description="The platform's fee as a share of the reward (default 0)."),
            OpenApiParameter("alpha", float, description="Level of the two-sided test (default 0.05)."),
        ],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="The grid, the assumptions and the method."),
            400: OpenApiResponse(description="A parameter that is wrong, or what the campaign lacks (in words)."),
            404: OpenApiResponse(description="No campaign with this slug."),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        campaign = campaign_or_404(request.user, slug)
        try:
            plan_request = parse_request({name: request.query_params.get(name, "") for name in NAMES})
            result = campaign_plan(campaign, plan_request)
        except PlanError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(result.as_dict())
