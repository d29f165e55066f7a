"""The API's browsable documentation: Swagger UI and ReDoc over the OpenAPI schema, staff only."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.urls import reverse
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView
from rest_framework.exceptions import NotAuthenticated


class LoginRedirectMixin:
    """For the API's HTML docs pages: a browser with no credentials goes to the login page.

    DRF answers a bare ``401`` text to a visitor who is not logged in; a person who opened
    ``/api/docs/`` wants the admin login with ``?next=`` back to the page. Callers that sent an
    ``Authorization`` header (scripts, wrong tokens) keep DRF's ``401`` and its message.
    """

    def handle_exception(self, exc: Exception) -> Any:
        request = self.request  # type: ignore[attr-defined]
        if isinstance(exc, NotAuthenticated) and "HTTP_AUTHORIZATION" not in request.META:
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        return super().handle_exception(exc)  # type: ignore[misc]


class SwaggerDocsView(LoginRedirectMixin, SpectacularSwaggerSplitView):
    """Swagger UI with its start-up script served as a file (no inline script), staff only."""

    template_name = "staff/swagger_ui.html"


class RedocDocsView(LoginRedirectMixin, SpectacularRedocView):
    """ReDoc, staff only; a visitor who is not logged in goes to the login page."""

    template_name = "staff/redoc.html"
