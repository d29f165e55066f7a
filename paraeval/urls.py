"""Top-level routes: the volunteer pages, the staff pages, the admin, the REST API and the docs."""

from django.contrib import admin
from django.urls import include, path

from staff.views import site

# The admin's "View site" leads to the home page, which shows staff their hub.
admin.site.site_url = "/"
admin.site.site_header = "ParaEval administration"
admin.site.site_title = "ParaEval admin"

urlpatterns = [
    path("", site.home, name="home"),
    path("admin/", admin.site.urls),
    path("", include("annotate.urls")),
    path("staff/", include("staff.urls")),
    path("api/", include("api.urls")),
    path("docs/", site.docs, name="docs"),
    path("docs/<path:path>", site.docs, name="docs-page"),
    # Django's set_language: the language switch of the volunteer pages.
    path("i18n/", include("django.conf.urls.i18n")),
]

# A database outage is a 503 "back in a moment" page in the volunteer's language, not a bare 500.
handler500 = "paraeval.errors.server_error"
