"""Pagination shared by every list endpoint of the API."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request


class ApiPagination(PageNumberPagination):
    """``?page=N`` and ``?page_size=M`` (default ``API_PAGE_SIZE``, at most 1000 per page).

    A ``page_size`` that is not a whole number from 1 to 1000 is a 400 naming it (DRF would
    silently use the default); so is a ``page`` that is empty or not a whole number from 1. A
    page past the end is DRF's 404 "Invalid page."
    """

    page_size_query_param = "page_size"
    max_page_size = 1000

    def get_page_number(self, request: Request, paginator: Any) -> int | str:
        # DRF reads an empty ?page= as page 1 and "abc" as a 404; the schema says a whole number
        # from 1, so anything else is a 400 that names the parameter.
        raw = request.query_params.get(self.page_query_param)
        if raw is None:
            return 1
        if raw in self.last_page_strings:
            return raw
        if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
            raise ValidationError({self.page_query_param: [f"Expected a whole number from 1, got {raw!r}."]})
        return int(raw)

    def get_page_size(self, request: Request) -> int | None:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not raw.strip().isdigit() or not 1 <= int(raw) <= self.max_page_size:
            raise ValidationError(
                {self.page_size_query_param: [f"Expected a whole number from 1 to {self.max_page_size}, got {raw!r}."]}
            )
        return int(raw)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1}
            elif parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1, "maximum": self.max_page_size}
        return parameters
