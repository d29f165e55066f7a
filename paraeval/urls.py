"""Top-level routes: the volunteer flow, staff pages, the admin and the REST API."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("annotate.urls")),
    path("staff/export/", include("annotate.exports.urls")),
    path("staff/", include("scoring.urls")),
    path("api/", include("paraeval.api_urls")),
]
