"""The site's answer when something fails: a 503 "back in a moment" page while the database
cannot be reached, Django's plain 500 page otherwise.

``handler500`` is called inside Django's ``except`` block, so the exception is still at hand.
A database outage (``OperationalError`` or ``InterfaceError`` from the connection) is not a
bug: volunteers get a page in their language that says their answers are safe and when to try
again (``Retry-After``); API callers get the same as JSON. Nothing here reads the database:
the language comes from the volunteer's language choice, else the language of the last
volunteer page they saw (a cookie), else from the browser.
"""

from __future__ import annotations

import sys

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils import translation
from django.views import defaults

# Seconds a client is asked to wait before trying again (a restart of PostgreSQL takes a few).
RETRY_AFTER_SECONDS = 30


def database_down(error: BaseException | None) -> bool:
    """Whether ``error`` says the database cannot be reached (not a bug in a query)."""
    return isinstance(error, OperationalError | InterfaceError)


# Set by the volunteer pages (annotate.views.volunteer_language): the language of their last page.
PAGE_LANGUAGE_COOKIE = "paraeval_page_language"


def _language(request: HttpRequest) -> str:
    """The volunteer's chosen language, else the language of their last page (the campaign's),
    else their browser's: no database needed."""
    codes = {code for code, _ in settings.LANGUAGES}
    for cookie in (settings.LANGUAGE_COOKIE_NAME, PAGE_LANGUAGE_COOKIE):
        value = request.COOKIES.get(cookie)
        if value in codes:
            return str(value)
    return translation.get_language_from_request(request)


def unavailable(request: HttpRequest) -> HttpResponse:
    """The 503 answer while the database is down: JSON for the API, a translated page otherwise."""
    if request.path_info.startswith("/api/"):
        response: HttpResponse = JsonResponse(
            {
                "detail": "The database cannot be reached right now; nothing was changed by this request. "
                f"Try again in {RETRY_AFTER_SECONDS} seconds."
            },
            status=503,
        )
    else:
        language = _language(request)
        with translation.override(language):
            html = render_to_string("site/unavailable.html", {"retry_after": RETRY_AFTER_SECONDS})
        response = HttpResponse(html, status=503, content_type="text/html; charset=utf-8")
        response["Content-Language"] = language
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: the 503 page for a database outage, Django's 500 page for anything else."""
    if database_down(sys.exc_info()[1]):
        return unavailable(request)
    return defaults.server_error(request)
