"""Fixtures and helpers of the API tests (``from tests.api_support import *`` in a test module).

Callers of the API, one per row of the permission matrix: anonymous, a volunteer presenting
their token (header, cookie, query parameter), a logged-in user who is not staff, and staff
with a DRF token (``manage.py drf_create_token``).
"""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.builders import make_staff

__all__ = ["api", "staff_api", "staff_user", "token_client", "user_api"]


def token_client(user) -> APIClient:  # type: ignore[no-untyped-def]
    """A client that sends ``Authorization: Token <key>`` for ``user`` (no session)."""
    token, _ = Token.objects.get_or_create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def api() -> APIClient:
    """An anonymous client."""
    return APIClient()


@pytest.fixture
def staff_user(django_user_model):  # type: ignore[no-untyped-def]
    return make_staff("researcher", "pw-researcher")


@pytest.fixture
def staff_api(staff_user) -> APIClient:  # type: ignore[no-untyped-def]
    return token_client(staff_user)


@pytest.fixture
def user_api(django_user_model) -> APIClient:  # type: ignore[no-untyped-def]
    """A logged-in user without the staff flag, with a valid API token."""
    return token_client(django_user_model.objects.create_user("visitor", password="pw-visitor"))
