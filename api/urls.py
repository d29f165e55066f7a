"""REST API routes, mounted at ``/api/`` (staff only: token or session authentication).

``/api/`` is DRF's API root (the list of collections). The OpenAPI 3 document is at ``/api/schema/``
and its browsable docs at ``/api/docs/`` (Swagger UI) and ``/api/redoc/``, both served from local
static files (drf-spectacular-sidecar); a visitor who is not logged in is sent to the login page.
"""

from csp.decorators import csp_update
from django.urls import path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.routers import DefaultRouter

from api.docs import RedocDocsView, SwaggerDocsView
from api.paraphrasus_views import CampaignObjectivesView, CampaignParaphrasusView
from api.planning_views import CampaignPlanView
from api.probe_views import CampaignProbesView, CampaignRobustnessView
from api.score_views import (
    CampaignMetaEvaluationView,
    CampaignReportView,
    MetricConfigViewSet,
    ScoreImportView,
    ScoreViewSet,
)
from api.views import CampaignExportView, CampaignViewSet, JudgementViewSet, PairViewSet

# DefaultRouter: its API root answers /api/ with the list of collections (staff only, like the
# rest); no ".json" suffix routes, the Accept header or ?format= choose the rendering.
router = DefaultRouter()
router.include_format_suffixes = False
router.register("campaigns", CampaignViewSet, basename="api-campaign")
router.register("pairs", PairViewSet, basename="api-pair")
router.register("judgements", JudgementViewSet, basename="api-judgement")
router.register("metric-configs", MetricConfigViewSet, basename="api-metric-config")
router.register("scores", ScoreViewSet, basename="api-score")

# ReDoc styles itself with inline <style> elements and searches in a blob: web worker: this
# route alone relaxes the site's Content-Security-Policy for those (scripts stay 'self').
REDOC_POLICY = csp_update({"style-src": ["'unsafe-inline'"], "worker-src": ["'self'", "blob:"]})

urlpatterns = [
    path("campaigns/<slug:slug>/export/", CampaignExportView.as_view(), name="api-campaign-export"),
    path("campaigns/<slug:slug>/report/", CampaignReportView.as_view(), name="api-campaign-report"),
    path(
        "campaigns/<slug:slug>/meta-evaluation/",
        CampaignMetaEvaluationView.as_view(),
        name="api-campaign-meta-evaluation",
    ),
    path("campaigns/<slug:slug>/plan/", CampaignPlanView.as_view(), name="api-campaign-plan"),
    path("campaigns/<slug:slug>/objectives/", CampaignObjectivesView.as_view(), name="api-campaign-objectives"),
    path("campaigns/<slug:slug>/paraphrasus/", CampaignParaphrasusView.as_view(), name="api-campaign-paraphrasus"),
    path("campaigns/<slug:slug>/robustness/", CampaignRobustnessView.as_view(), name="api-campaign-robustness"),
    path("campaigns/<slug:slug>/probes/", CampaignProbesView.as_view(), name="api-campaign-probes"),
    # Before the router: "import" would otherwise be read as a score's id.
    path("scores/import/", ScoreImportView.as_view(), name="api-score-import"),
    *router.urls,
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SwaggerDocsView.as_view(url_name="api-schema"), name="api-docs"),
    path("redoc/", REDOC_POLICY(RedocDocsView.as_view(url_name="api-schema")), name="api-redoc"),
]
