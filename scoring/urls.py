"""Staff pages: the agreement dashboard, the scoring status, and the pairs with their judgements and scores."""

from django.urls import path

from scoring.views import bring, dashboard, pairs, status

app_name = "scoring"

urlpatterns: list = [
    path("status/", status.status_page, name="status"),
    path("status.json", status.status_json, name="status_json"),
    path("dashboard/", dashboard.dashboard, name="dashboard"),
    path("dashboard/data/", dashboard.dashboard_data, name="dashboard-data"),
    # A pair shows its scores beside its judgements: scoring's page (annotate never reads scores).
    path("campaigns/<slug:slug>/pairs/", pairs.pair_list, name="staff-pairs"),
    path("campaigns/<slug:slug>/pairs/<int:pair_id>/", pairs.pair_page, name="staff-pair"),
    path("scores/import/", bring.score_import, name="score-import"),
    path("generate/", bring.generate, name="generate"),
]
