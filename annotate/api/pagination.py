"""Pagination shared by every list endpoint of the API."""

from __future__ import annotations

from rest_framework.pagination import PageNumberPagination


class ApiPagination(PageNumberPagination):
    """``?page=N`` and ``?page_size=M`` (default ``API_PAGE_SIZE``, at most 1000 per page)."""

    page_size_query_param = "page_size"
    max_page_size = 1000
