"""An export as a streamed HTTP response (shared by the staff page and the API)."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from django.utils.http import content_disposition_header

from annotate.exports.service import Export


def export_response(export: Export) -> StreamingHttpResponse:
    """Stream ``export`` as an attachment; rows are read from the database as the client reads."""
    response = StreamingHttpResponse(export.chunks(), content_type=export.content_type)
    response["Content-Disposition"] = content_disposition_header(True, export.filename)
    # The corpus is research data behind a login: no shared cache may keep a copy.
    response["Cache-Control"] = "private, no-store"
    return response
