"""DRF content negotiation that refuses request bodies holding text PostgreSQL cannot store.

DRF's ``CharField`` already refuses NUL characters and lone surrogates, but slugs looked up
by ``SlugRelatedField``, free-form ``DictField`` records and future fields may not: one such
character reaching a query is a 500 (``DataError``). Every parser a view picks is wrapped here
(``DEFAULT_CONTENT_NEGOTIATION_CLASS``), so each API view is covered, whatever its own
``parser_classes`` are, and only after authentication (bodies are parsed lazily).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping
from typing import Any

from django.http import QueryDict
from rest_framework.exceptions import ParseError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser, DataAndFiles
from rest_framework.request import Request

from paraeval.textcheck import MAX_JSON_DEPTH, TOO_DEEP, find_in_data, too_deep

# In JSON text a NUL can only be written \u0000 and a lone surrogate \uD800-\uDFFF (raw ones
# are invalid JSON): a body with neither escape is clean without looking at its values.
TOO_DEEP_MESSAGE = f"The JSON body is {TOO_DEEP}; records are flat objects."
_SUSPECT_JSON = re.compile(rb"\\u0000|\\u[dD][89abAB][0-9a-fA-F]{2}")


class CheckedParser(BaseParser):
    """Wraps a parser: parse as it does, then refuse NULs and lone surrogates with a 400 naming the field."""

    def __init__(self, inner: BaseParser) -> None:
        self.inner = inner
        self.media_type = inner.media_type

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        if "json" in (self.inner.media_type or ""):
            # JSON bodies are read whole by DRF's parser anyway: read them here once, so that
            # the cheap byte search decides whether the values need looking at.
            raw = stream.read() if stream is not None else b""
            try:
                data = self.inner.parse(io.BytesIO(raw), media_type, parser_context)
            except RecursionError:
                raise ParseError(TOO_DEEP_MESSAGE) from None
            # Parsable but deep: the serializers, the importer and the renderer recurse too.
            if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and too_deep(data):
                raise ParseError(TOO_DEEP_MESSAGE)
            if not _SUSPECT_JSON.search(raw):
                return data
        else:
            data = self.inner.parse(stream, media_type, parser_context)
        fields = data.data if isinstance(data, DataAndFiles) else data
        if isinstance(fields, QueryDict):
            fields = {key: fields.getlist(key) for key in fields}
        problem = find_in_data(fields)
        if problem is not None:
            raise ParseError(problem.message)
        return data


class CheckedContentNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, with the chosen parser wrapped in :class:`CheckedParser`."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        parser = super().select_parser(request, parsers)
        return CheckedParser(parser) if parser is not None else None
