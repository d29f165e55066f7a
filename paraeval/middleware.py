"""Request guards and response headers that apply to every page.

* :class:`RequestSizeMiddleware`: a body larger than its limit is refused before anything
  reads it, with a 413 that says the limit (JSON with how to split the records for the API).
* :class:`InvalidTextMiddleware`: an address, query string, cookie or header holding a NUL
  character or a lone surrogate is a 400 with a message, never a 500 from PostgreSQL.
* :class:`PermissionsPolicyMiddleware`: the ``Permissions-Policy`` header (Django has none).
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

from paraeval.textcheck import InvalidText, first_invalid

Handler = Callable[[HttpRequest], HttpResponse]

MIB = 1024 * 1024
# Pages other than the API keep Django's own default for what a form may post (2.5 MiB);
# file uploads (multipart) are streamed to disk by Django and are not counted here.
FORM_MAX_BODY_BYTES = 2_621_440


def is_api(request: HttpRequest) -> bool:
    """Requests to the REST API get JSON errors."""
    return request.path_info.startswith("/api/")


def api_max_body_bytes() -> int:
    """Largest API request body (setting ``PARAEVAL_API_MAX_BODY_MB``)."""
    return int(settings.PARAEVAL_API_MAX_BODY_MB * MIB)


class RequestSizeMiddleware:
    """413 for a body over its limit, judged on ``Content-Length`` before the body is read.

    ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is set to the API's limit (Django's own check then never
    fires first with its bare HTML 400); this middleware holds the other pages to Django's
    default of 2.5 MiB. Under WSGI a body without ``Content-Length`` reads as empty.
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return HttpResponseBadRequest("Bad request: the Content-Length header is not a number.")
        if is_api(request):
            limit = api_max_body_bytes()
            if length > limit:
                return JsonResponse(
                    {
                        "detail": (
                            f"The request body is {length / MIB:.1f} MiB; the API accepts at most "
                            f"{limit / MIB:g} MiB per request. Split the records into several requests: "
                            "the records of one request are stored all or nothing."
                        ),
                        "max_body_bytes": limit,
                        "body_bytes": length,
                    },
                    status=413,
                )
        elif length > FORM_MAX_BODY_BYTES and not (request.content_type or "").startswith("multipart/"):
            return HttpResponse(
                f"Request too large: this page accepts at most {FORM_MAX_BODY_BYTES / MIB:g} MiB.",
                status=413,
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)


def _invalid_part(request: HttpRequest) -> InvalidText | None:
    """The first part of the request, other than its body, that holds a NUL or a lone surrogate."""
    character = first_invalid(request.path)
    if character is not None:
        return InvalidText("The address", character)
    for key, values in request.GET.lists():
        character = first_invalid(key)
        if character is not None:
            return InvalidText("A query parameter name", character)
        for value in values:
            character = first_invalid(value)
            if character is not None:
                return InvalidText(f"The query parameter {key}", character)
    for name, value in request.COOKIES.items():
        character = first_invalid(name) or first_invalid(value)
        if character is not None:
            return InvalidText("A cookie", character)
    for key, value in request.META.items():
        if key.startswith("HTTP_") and isinstance(value, str):
            character = first_invalid(value)
            if character is not None:
                return InvalidText(f"The header {key[5:].replace('_', '-').title()}", character)
    return None


class InvalidTextMiddleware:
    """400 with a message for a NUL or a lone surrogate outside the body (JSON for the API).

    Such text cannot reach PostgreSQL (a ``DataError``, hence a 500): ``/v/%00/`` looked a
    volunteer token up. Bodies are checked by the API's parsers and the forms' validators.
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = _invalid_part(request)
        if problem is None:
            return self.get_response(request)
        if is_api(request):
            return JsonResponse({"detail": problem.message}, status=400)
        return HttpResponseBadRequest(f"Bad request. {problem.message}", content_type="text/plain; charset=utf-8")


class PermissionsPolicyMiddleware:
    """Adds ``Permissions-Policy`` (``PARAEVAL_PERMISSIONS_POLICY``): no page uses a device API.

    Hand-written: Django has no setting for it and the header is one line.
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.PARAEVAL_PERMISSIONS_POLICY
        if policy:
            response.headers.setdefault("Permissions-Policy", policy)
        return response
