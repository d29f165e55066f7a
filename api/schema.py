"""The OpenAPI schema class of the API: every operation documents the errors it can answer.

drf-spectacular documents the success answer of each operation; the errors that DRF and the
middleware give every operation (401 without a valid token, 403 for a user who is not staff,
429 when throttled, 413 for a body over the limit, 400 for a bad filter or body, 404 for an
unknown object or page) are added here once, so that the document matches what the server
answers (checked by tests/test_api_schemathesis.py). An operation's own ``@extend_schema``
responses win over these.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

DETAIL = serializers.CharField(help_text="What went wrong, in words.")

ERROR = inline_serializer("Error", {"detail": DETAIL})
VALIDATION_ERROR = inline_serializer(
    "ValidationError",
    {
        "detail": serializers.CharField(required=False, help_text="What went wrong, when not about one field."),
        "non_field_errors": serializers.ListField(child=serializers.CharField(), required=False),
    },
)
TOO_LARGE = inline_serializer(
    "RequestTooLarge",
    {
        "detail": DETAIL,
        "max_body_bytes": serializers.IntegerField(help_text="The largest body the API accepts."),
        "body_bytes": serializers.IntegerField(help_text="The size of the body sent."),
    },
)
THROTTLED = inline_serializer("Throttled", {"detail": DETAIL})

COMMON_ERRORS: dict[str, OpenApiResponse] = {
    "401": OpenApiResponse(ERROR, description="No valid credentials (send `Authorization: Token <key>`)."),
    "403": OpenApiResponse(ERROR, description="The account is not staff."),
    "429": OpenApiResponse(THROTTLED, description="Too many requests: the body says when to try again."),
}
LOOKUP_ERROR = OpenApiResponse(
    VALIDATION_ERROR, description="No such object, no such page of a list, or an unknown campaign in a filter."
)
# Refusals no JSON Schema keyword can state for every string: said in every operation's 400.
REFUSED_EVERYWHERE = (
    "Text holding a NUL character (U+0000) or a lone surrogate is refused anywhere in a request: "
    "address, query, header or body (PostgreSQL cannot store it); so is JSON nested more than 32 levels deep."
)
BAD_REQUEST = OpenApiResponse(
    VALIDATION_ERROR, description="A bad parameter or body: each field name maps to its messages."
)
BODY_TOO_LARGE = OpenApiResponse(TOO_LARGE, description="The body is over the API's limit (the body says it).")


class ErrorDocumentingAutoSchema(AutoSchema):
    """drf-spectacular's AutoSchema, with the errors every API operation can answer."""

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        extra: dict[str, OpenApiResponse] = dict(COMMON_ERRORS)
        # A path parameter names an object, and a list has pages: either can be missing.
        if "{" in self.path or self._is_list_view():
            extra["404"] = LOOKUP_ERROR
        # Any request can be refused for a NUL in its address or query (the middleware), and
        # filters and bodies are validated.
        extra["400"] = BAD_REQUEST
        if self.method in {"POST", "PUT", "PATCH"}:
            extra["413"] = BODY_TOO_LARGE
        for code, response in extra.items():
            if code not in responses:
                responses[code] = self._get_response_for_code(response, code, direction=direction)
        bad = responses["400"]
        if REFUSED_EVERYWHERE not in bad.get("description", ""):
            bad["description"] = f"{bad.get('description', '').rstrip()} {REFUSED_EVERYWHERE}".strip()
        return responses
