"""Limits on anonymous abuse: volunteer starts per address, failed API tokens, API throttles.

The counting is django-ratelimit's (fixed windows in the shared ``limits`` cache: Redis or
:class:`paraeval.cache.SharedFileCache`); this module decides the client's address, what is
counted, and the answers: a 429 page for volunteers, JSON 429s for the API. The admin login's
lockout is django-axes' (settings ``AXES_*``), with the same client address.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_ratelimit.core import get_usage
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.request import Request
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

logger = logging.getLogger(__name__)

CACHE_ALIAS = "limits"


def client_ip(request: HttpRequest) -> str:
    """The client's address: ``REMOTE_ADDR``, or ``X-Forwarded-For`` behind trusted proxies.

    ``PARAEVAL_TRUSTED_PROXIES`` = N > 0 says N reverse proxies of ours stand in front of the
    server, each appending the address it saw to ``X-Forwarded-For``; the client is then the
    N-th entry from the right (entries further left are whatever the client sent, and a
    client can send anything). With 0, the default, the header is ignored: trusting it
    without a proxy would let anyone pick their own address and escape every limit. Same rule
    as DRF's ``NUM_PROXIES``.
    """
    remote = request.META.get("REMOTE_ADDR") or "0.0.0.0"  # a counter key, not an address to bind
    proxies = settings.PARAEVAL_TRUSTED_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies <= 0 or not forwarded.strip():
        return remote
    addresses = [part.strip() for part in forwarded.split(",") if part.strip()]
    return addresses[-min(proxies, len(addresses))] if addresses else remote


@dataclass(frozen=True)
class Usage:
    """One counter of one client: how many events in the current window, and when it ends."""

    count: int
    limit: int
    seconds_left: int

    @property
    def exceeded(self) -> bool:
        return self.count > self.limit

    @property
    def minutes_left(self) -> int:
        return max(1, math.ceil(self.seconds_left / 60))


def count(request: HttpRequest, group: str, rate: str, *, increment: bool, key: str = "ip") -> Usage | None:
    """Count (or read) one event of ``group`` for this client; None when the cache fails.

    A broken cache must not stop a campaign: the request goes through and the error is logged.
    """
    try:
        usage = get_usage(request, group=group, key=key, rate=rate, increment=increment)
    except Exception:  # any cache failure: Redis down, disk full…
        logger.exception("rate limit %s: the limits cache failed; letting the request through", group)
        return None
    if usage is None or usage["limit"] == 0:  # limits disabled, or the cache answered nothing
        return None
    return Usage(count=usage["count"], limit=usage["limit"], seconds_left=max(usage["time_left"], 1))


def limit_volunteer_starts(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Refuse a POST that would start a volunteer once the client's address used its quota.

    ``PARAEVAL_START_RATE`` ("30/10m" by default) per address: a lab behind one NAT address
    still gets 30 new volunteers every 10 minutes, a script no more. Over it: 429 with a page
    that says when to come back, and ``Retry-After``.
    """

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method == "POST":
            usage = count(request, "volunteer-start", settings.PARAEVAL_START_RATE, increment=True)
            if usage is not None and usage.exceeded:
                logger.warning("volunteer starts refused for %s (%d in the window)", client_ip(request), usage.count)
                response = render(request, "limits/too_many_starts.html", {"minutes": usage.minutes_left}, status=429)
                response["Retry-After"] = str(usage.seconds_left)
                return response
        return view(request, *args, **kwargs)

    return wrapped


def login_lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    """django-axes' answer to a locked-out admin login (``AXES_LOCKOUT_CALLABLE``): 429 and a page.

    Every attempt during the lockout starts the cool-off again, so the wait is the full one.
    """
    minutes = settings.PARAEVAL_LOGIN_LOCKOUT_MINUTES
    context = {
        "username": (credentials or {}).get("username", ""),
        "failure_limit": settings.PARAEVAL_LOGIN_FAILURE_LIMIT,
        "minutes": minutes,
    }
    response = render(request, "limits/login_locked.html", context, status=429)
    response["Retry-After"] = str(minutes * 60)
    return response


class LimitedTokenAuthentication(TokenAuthentication):
    """DRF token authentication that locks an address out after repeated bad tokens.

    ``PARAEVAL_LOGIN_FAILURE_LIMIT`` bad tokens from one address within
    ``PARAEVAL_LOGIN_LOCKOUT_MINUTES`` lock it out for that many minutes: every token request
    from it is then a JSON 429 (even with a good token). DRF's throttles cannot do this: they
    run after authentication, which has already answered 401.
    """

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header.lower().startswith(self.keyword.lower() + " "):
            return None  # no token: session or anonymous, nothing to count
        address = client_ip(request)
        seconds_left = _lockout_seconds_left(address)
        if seconds_left:
            raise _locked_out(seconds_left)
        try:
            return super().authenticate(request)
        except AuthenticationFailed:
            if _count_failure(address):
                raise _locked_out(settings.PARAEVAL_LOGIN_LOCKOUT_MINUTES * 60) from None
            raise


def _lockout_seconds_left(address: str) -> int:
    """Seconds until this address may present tokens again (0: it may now)."""
    try:
        until = caches[CACHE_ALIAS].get(f"api-token-locked:{address}")
    except Exception:  # the cache failed: do not lock anyone out
        logger.exception("API token lockout: the limits cache failed")
        return 0
    return max(0, math.ceil(until - time.time())) if until else 0


def _count_failure(address: str) -> bool:
    """Count one bad token; True when it reaches the limit (the address is then locked out)."""
    window = settings.PARAEVAL_LOGIN_LOCKOUT_MINUTES * 60
    cache = caches[CACHE_ALIAS]
    key = f"api-token-failures:{address}"
    try:
        cache.add(key, 0, window)
        failures = cache.incr(key)
        if failures < settings.PARAEVAL_LOGIN_FAILURE_LIMIT:
            return False
        cache.set(f"api-token-locked:{address}", time.time() + window, window)
        cache.delete(key)
    except Exception:  # the cache failed: count nothing, lock nobody out
        logger.exception("API token lockout: the limits cache failed")
        return False
    logger.warning("API tokens locked out for %s after %d bad tokens", address, failures)
    return True


def _locked_out(seconds: int) -> Throttled:
    minutes = max(1, math.ceil(seconds / 60))
    failure = Throttled(
        detail=(
            f"Too many failed token authentications from your address ({settings.PARAEVAL_LOGIN_FAILURE_LIMIT}): "
            f"try again in {minutes} minute{'s' if minutes != 1 else ''}."
        )
    )
    failure.wait = seconds  # type: ignore[attr-defined]  # after the message: DRF would append its own "Expected available in…"
    return failure


class _SharedCacheThrottle:
    """DRF throttle state in the shared ``limits`` cache, its rate read from settings at each request.

    (DRF's own classes keep their rates from import time and use the per-process default cache.)
    """

    rate_setting = ""

    def get_ident(self, request: Request) -> str:
        return client_ip(request)

    def get_rate(self) -> str:
        return str(getattr(settings, self.rate_setting))

    def allow_request(self, request: Request, view: Any) -> bool:
        self.cache = caches[CACHE_ALIAS]
        try:
            return super().allow_request(request, view)  # type: ignore[misc]
        except Exception:  # the cache failed: serve rather than refuse
            logger.exception("API throttle: the limits cache failed; letting the request through")
            return True


class ApiAnonThrottle(_SharedCacheThrottle, AnonRateThrottle):
    """Anonymous API calls per address (``PARAEVAL_API_ANON_RATE``)."""

    rate_setting = "PARAEVAL_API_ANON_RATE"


class ApiUserThrottle(_SharedCacheThrottle, UserRateThrottle):
    """Authenticated API calls per account (``PARAEVAL_API_USER_RATE``)."""

    rate_setting = "PARAEVAL_API_USER_RATE"
