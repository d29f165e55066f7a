"""REST API routes, mounted at ``/api/`` (staff only: token or session authentication).

The OpenAPI 3 document is at ``/api/schema/`` and its browsable docs at ``/api/docs/`` (Swagger
UI) and ``/api/redoc/``, both served from local static files (drf-spectacular-sidecar).
"""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from annotate.api.views import CampaignExportView, CampaignViewSet, JudgementViewSet, PairViewSet
from scoring.api.views import CampaignReportView, MetricConfigViewSet, ScoreViewSet

router = SimpleRouter()
router.register("campaigns", CampaignViewSet, basename="api-campaign")
router.register("pairs", PairViewSet, basename="api-pair")
router.register("judgements", JudgementViewSet, basename="api-judgement")
router.register("metric-configs", MetricConfigViewSet, basename="api-metric-config")
router.register("scores", ScoreViewSet, basename="api-score")

urlpatterns = [
    path("campaigns/<slug:slug>/export/", CampaignExportView.as_view(), name="api-campaign-export"),
    path("campaigns/<slug:slug>/report/", CampaignReportView.as_view(), name="api-campaign-report"),
    *router.urls,
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
]
