"""Staff pages: the agreement dashboard and the scoring status."""

from django.urls import path

from scoring.views import bring, dashboard, status

app_name = "scoring"

urlpatterns: list = [
    path("status/", status.status_page, name="status"),
    path("status.json", status.status_json, name="status_json"),
    path("dashboard/", dashboard.dashboard, name="dashboard"),
    path("dashboard/data/", dashboard.dashboard_data, name="dashboard-data"),
    path("scores/import/", bring.score_import, name="score-import"),
    path("generate/", bring.generate, name="generate"),
]
