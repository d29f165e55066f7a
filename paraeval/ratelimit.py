"""Limits on anonymous abuse: volunteer starts per address, failed API tokens, API throttles.

The counting is django-ratelimit's (fixed windows in the shared ``limits`` cache: Redis or
:class:`paraeval.cache.SharedFileCache`); this module decides the client's address, what is
counted, and the answers: a 429 page for volunteers, JSON 429s for the API. The admin login's
lockout is django-axes' (settings ``AXES_*``), with the same client address.
"""

from __future__ import annotations

import hashlib
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


# How many leading characters of a presented token name "the same token" for the failure count.
# DRF keys are 40 random hex characters (160 bits): guessing one is hopeless, so the lockout is
# there to stop a client that keeps sending a wrong or revoked token (and to say so), not to
# stand between a caller and a token that works. Counting by address alone locked out every
# client behind a proxy or NAT after five typos by anyone.
TOKEN_PREFIX_CHARACTERS = 8


@dataclass(frozen=True)
class _FailureCounter:
    """One kind of bad-token counter: its cache key, its limit, and the 429's reason."""

    key: str
    limit: int
    reason: str


class LimitedTokenAuthentication(TokenAuthentication):
    """DRF token authentication that limits repeated bad tokens, never a good one.

    A token that authenticates is always served. A bad one is counted twice: under its first
    :data:`TOKEN_PREFIX_CHARACTERS` characters (``PARAEVAL_LOGIN_FAILURE_LIMIT``, 5 by default)
    and under the client's address (``PARAEVAL_API_TOKEN_ADDRESS_FAILURE_LIMIT``, for a client
    that tries many different tokens). Once a count reaches its limit within
    ``PARAEVAL_LOGIN_LOCKOUT_MINUTES``, further bad tokens of that prefix (or from that address)
    get a JSON 429 naming the reason and a ``Retry-After`` instead of a 401, for that many
    minutes. DRF's throttles cannot do this: they run after authentication, which has
    already answered 401.
    """

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header.lower().startswith(self.keyword.lower() + " "):
            return None  # no token: session or anonymous, nothing to count
        try:
            return super().authenticate(request)
        except AuthenticationFailed:
            presented = header[len(self.keyword) + 1 :].strip()
            locked = _count_failure(_failure_counters(presented, client_ip(request)))
            if locked is not None:
                raise locked from None
            raise


def _failure_counters(presented: str, address: str) -> list[_FailureCounter]:
    """The counters one bad token adds to: its prefix's, then its address's."""
    # Hashed: the key holds no part of anyone's token, and any bytes make a valid cache key.
    prefix = hashlib.sha256(presented[:TOKEN_PREFIX_CHARACTERS].encode("utf-8", "replace")).hexdigest()[:24]
    per_token = settings.PARAEVAL_LOGIN_FAILURE_LIMIT
    per_address = settings.PARAEVAL_API_TOKEN_ADDRESS_FAILURE_LIMIT
    return [
        _FailureCounter(
            f"api-token-prefix:{prefix}", per_token, f"Too many failed authentications with this token ({per_token})"
        ),
        _FailureCounter(
            f"api-token-address:{address}",
            per_address,
            f"Too many failed token authentications from your address ({per_address})",
        ),
    ]


def _count_failure(counters: list[_FailureCounter]) -> Throttled | None:
    """Count one bad token on each counter; the 429 to answer when one of them is locked (else None).

    A counter that reaches its limit is locked for ``PARAEVAL_LOGIN_LOCKOUT_MINUTES`` from that
    failure; bad tokens during the lock are answered 429 with the time left.
    """
    window = settings.PARAEVAL_LOGIN_LOCKOUT_MINUTES * 60
    cache = caches[CACHE_ALIAS]
    try:
        for counter in counters:
            until = cache.get(f"{counter.key}:locked")
            if until:
                return _locked_out(counter.reason, max(1, math.ceil(until - time.time())))
            cache.add(counter.key, 0, window)
            failures = cache.incr(counter.key)
            if failures >= counter.limit:
                cache.set(f"{counter.key}:locked", time.time() + window, window)
                cache.delete(counter.key)
                logger.warning("API tokens locked out (%s) after %d bad tokens", counter.key, failures)
                return _locked_out(counter.reason, window)
    except Exception:  # the cache failed: count nothing, lock nobody out
        logger.exception("API token lockout: the limits cache failed")
    return None


def _locked_out(reason: str, seconds: int) -> Throttled:
    minutes = max(1, math.ceil(seconds / 60))
    failure = Throttled(detail=f"{reason}: try again in {minutes} minute{'s' if minutes != 1 else ''}.")
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
            return bool(super().allow_request(request, view))  # type: ignore[misc]
        except Exception:  # the cache failed: serve rather than refuse
            logger.exception("API throttle: the limits cache failed; letting the request through")
            return True


class ApiAnonThrottle(_SharedCacheThrottle, AnonRateThrottle):
    """Anonymous API calls per address (``PARAEVAL_API_ANON_RATE``)."""

    rate_setting = "PARAEVAL_API_ANON_RATE"


class ApiUserThrottle(_SharedCacheThrottle, UserRateThrottle):
    """Authenticated API calls per account (``PARAEVAL_API_USER_RATE``)."""

    rate_setting = "PARAEVAL_API_USER_RATE"
