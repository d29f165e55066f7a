"""Top-level routes: the volunteer flow, staff pages, the admin and the REST API."""

from django.contrib import admin
from django.urls import include, path

from paraeval import views

# The admin's "View site" leads to the home page, which shows staff their hub.
admin.site.site_url = "/"
admin.site.site_header = "ParaEval administration"
admin.site.site_title = "ParaEval admin"

urlpatterns = [
    path("", views.home, name="home"),
    path("admin/", admin.site.urls),
    path("", include("annotate.urls")),
    path("staff/", views.staff_home, name="staff-home"),
    path("staff/export/", views.exports, name="staff-exports"),
    path("staff/export/", include("annotate.exports.urls")),
    path("staff/", include("scoring.urls")),
    path("api/", include("paraeval.api_urls")),
    path("docs/", views.docs, name="docs"),
    path("docs/<path:path>", views.docs, name="docs-page"),
    # Django's set_language: the language switch of the volunteer pages.
    path("i18n/", include("django.conf.urls.i18n")),
]

# A database outage is a 503 "back in a moment" page in the volunteer's language, not a bare 500.
handler500 = "paraeval.errors.server_error"
