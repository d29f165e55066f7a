"""Pagination of the staff tables."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator


class KnownCountPaginator(Paginator[Any]):
    """A paginator told how many rows there are (a kept count), so that it never counts them."""

    def __init__(self, object_list: Any, count: int, per_page: int = 50) -> None:
        super().__init__(object_list, per_page)
        self._known_count = count

    @property
    def count(self) -> int:
        return self._known_count
