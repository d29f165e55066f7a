"""Abuse limits: volunteer starts per address, the admin login lockout, API tokens and throttles.

The suite's settings relax every limit (tests/settings.py); each test here sets the one it
checks and starts from empty counters in the shared ``limits`` cache.
"""

from __future__ import annotations

import math
import pickle
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.core.cache import caches
from django.test import Client, override_settings
from django.test.client import RequestFactory
from django.utils import timezone

from annotate import allocation
from annotate.models import Assignment, Pair, Volunteer
from paraeval.cache import SharedFileCache
from paraeval.ratelimit import client_ip
from tests.api_support import *  # noqa: F403
from tests.api_support import token_client
from tests.builders import make_campaign, make_pair, make_staff

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent

START = {"consent": "on", "english_level": "advanced"}


@pytest.fixture(autouse=True)
def _empty_counters() -> Iterator[None]:
    caches["limits"].clear()
    yield
    caches["limits"].clear()


@pytest.fixture
def campaign():
    campaign = make_campaign(slug="limits")
    for index in range(3):
        make_pair(campaign, external_id=f"p{index}")
    return campaign


def start(campaign, address: str, **headers: str):  # type: ignore[no-untyped-def]
    """A new visitor (no cookie) starting from ``address``."""
    return Client().post(f"/c/{campaign.slug}/", START, REMOTE_ADDR=address, **headers)


@override_settings(PARAEVAL_START_RATE="3/1d")
def test_a_burst_of_starts_from_one_address_is_refused_with_429_and_retry_after(campaign) -> None:
    answers = [start(campaign, "203.0.113.7") for _ in range(5)]
    assert [answer.status_code for answer in answers] == [302, 302, 302, 429, 429]
    refused = answers[3]
    retry_after = int(refused["Retry-After"])
    assert 0 < retry_after <= 24 * 3600
    minutes = math.ceil(retry_after / 60)
    page = refused.content.decode()
    assert "<h1>Too many new volunteers from your network</h1>" in page
    assert f"Please try again in {minutes} minute{'s' if minutes != 1 else ''}." in page
    assert Volunteer.objects.filter(campaign=campaign).count() == 3
    # Another address is not concerned; the page itself stays readable for the limited one.
    assert start(campaign, "198.51.100.9").status_code == 302
    assert Client().get(f"/c/{campaign.slug}/", REMOTE_ADDR="203.0.113.7").status_code == 200
    assert Volunteer.objects.filter(campaign=campaign).count() == 4


def test_with_redis_the_counters_live_in_redis(campaign, redis_url: str) -> None:
    """docker-compose's three gunicorn workers share the counters through Redis."""
    limits = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url, "KEY_PREFIX": "hc-test"}
    with override_settings(CACHES={**settings.CACHES, "limits": limits}, PARAEVAL_START_RATE="2/1d"):
        caches["limits"].clear()
        codes = [start(campaign, "203.0.113.7").status_code for _ in range(3)]
        keys = redis.Redis.from_url(redis_url).keys("hc-test:*")
        caches["limits"].clear()
    assert codes == [302, 302, 429]
    assert len(keys) == 1


@override_settings(PARAEVAL_START_RATE="2/1d", PARAEVAL_TRUSTED_PROXIES=0)
def test_x_forwarded_for_is_ignored_unless_proxies_are_trusted(campaign) -> None:
    codes = [start(campaign, "192.0.2.1", HTTP_X_FORWARDED_FOR=f"203.0.113.{index}").status_code for index in range(4)]
    assert codes == [302, 302, 429, 429]


@override_settings(PARAEVAL_START_RATE="2/1d", PARAEVAL_TRUSTED_PROXIES=1)
def test_behind_a_trusted_proxy_the_client_is_the_address_it_forwarded(campaign) -> None:
    proxy = "10.0.0.2"
    # What the client itself wrote in the header (left of the proxy's entry) changes nothing.
    first = start(campaign, proxy, HTTP_X_FORWARDED_FOR="203.0.113.7")
    second = start(campaign, proxy, HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.7")
    third = start(campaign, proxy, HTTP_X_FORWARDED_FOR="5.6.7.8, 203.0.113.7")
    other = start(campaign, proxy, HTTP_X_FORWARDED_FOR="203.0.113.8")
    assert [first.status_code, second.status_code, third.status_code, other.status_code] == [302, 302, 429, 302]


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (0, "1.1.1.1", "192.0.2.1"),
        (1, "", "192.0.2.1"),
        (1, "1.1.1.1, 2.2.2.2", "2.2.2.2"),
        (2, "1.1.1.1, 2.2.2.2, 3.3.3.3", "2.2.2.2"),
        (3, "2.2.2.2", "2.2.2.2"),
    ],
)
def test_client_ip_takes_the_entry_the_outermost_trusted_proxy_wrote(proxies, forwarded, expected) -> None:
    request = RequestFactory().get("/", REMOTE_ADDR="192.0.2.1", HTTP_X_FORWARDED_FOR=forwarded)
    with override_settings(PARAEVAL_TRUSTED_PROXIES=proxies):
        assert client_ip(request) == expected


LOCKOUT = {"PARAEVAL_LOGIN_FAILURE_LIMIT": 5, "PARAEVAL_LOGIN_LOCKOUT_MINUTES": 15, "AXES_FAILURE_LIMIT": 5}


@override_settings(**LOCKOUT)
def test_admin_login_locks_an_address_and_user_name_after_five_failures(django_user_model) -> None:
    make_staff("staff", "right-password-123")
    client = Client(REMOTE_ADDR="203.0.113.7")

    def log_in(username: str, password: str):  # type: ignore[no-untyped-def]
        return client.post("/admin/login/?next=/admin/", {"username": username, "password": password})

    codes = [log_in("staff", f"wrong-{attempt}").status_code for attempt in range(5)]
    assert codes == [200, 200, 200, 200, 429]
    locked = log_in("staff", "right-password-123")  # even the right password, during the lockout
    assert locked.status_code == 429
    assert locked["Retry-After"] == "900"
    page = locked.content.decode()
    assert "<h1>Login locked</h1>" in page
    assert "Too many failed logins for “staff” from your address (5 in a row)." in page
    assert "Try again in 15 minutes" in page
    # The same account from another address, and another account from this one, still log in.
    make_staff("other", "other-password-123")
    assert log_in("other", "other-password-123").status_code == 302
    elsewhere = Client(REMOTE_ADDR="198.51.100.9").post(
        "/admin/login/?next=/admin/", {"username": "staff", "password": "right-password-123"}
    )
    assert elsewhere.status_code == 302


@override_settings(PARAEVAL_LOGIN_FAILURE_LIMIT=5, PARAEVAL_LOGIN_LOCKOUT_MINUTES=15)
def test_one_bad_token_sent_again_and_again_is_locked_out_with_a_reason(staff_user) -> None:
    bad = Client(REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION="Token " + "0" * 40)
    answers = [bad.get("/api/campaigns/") for _ in range(6)]
    assert [answer.status_code for answer in answers] == [401, 401, 401, 401, 429, 429]
    assert answers[0].json() == {"detail": "Invalid token."}
    assert answers[4].json() == {
        "detail": "Too many failed authentications with this token (5): try again in 15 minutes."
    }
    assert 840 <= int(answers[4]["Retry-After"]) <= 900
    # The same token from another address is still the same token; a variant of its end too.
    elsewhere = Client(REMOTE_ADDR="198.51.100.9", HTTP_AUTHORIZATION="Token " + "0" * 39 + "1")
    assert elsewhere.get("/api/campaigns/").status_code == 429


@override_settings(PARAEVAL_LOGIN_FAILURE_LIMIT=5, PARAEVAL_LOGIN_LOCKOUT_MINUTES=15)
def test_bad_tokens_from_an_address_never_refuse_a_good_token_from_it(staff_user) -> None:
    """Behind a proxy every client has the proxy's address: others' typos must not lock anyone out."""
    good_key = token_client(staff_user)._credentials["HTTP_AUTHORIZATION"]
    for index in range(5):
        bad = Client(REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION=f"Token {index:08d}" + "f" * 32)
        assert bad.get("/api/campaigns/").status_code == 401
    # The same token five times: that token is locked, the address's good token is not.
    for _ in range(5):
        Client(REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION="Token " + "e" * 40).get("/api/campaigns/")
    good = Client(REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION=good_key)
    assert good.get("/api/campaigns/").status_code == 200
    # Even a good token that shares its first characters with a locked bad one is served.
    prefix = good_key.removeprefix("Token ")[:8]
    same_start = Client(REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION=f"Token {prefix}" + "0" * 32)
    assert [same_start.get("/api/campaigns/").status_code for _ in range(6)] == [401, 401, 401, 401, 429, 429]
    assert good.get("/api/campaigns/").status_code == 200


@override_settings(
    PARAEVAL_LOGIN_FAILURE_LIMIT=5, PARAEVAL_API_TOKEN_ADDRESS_FAILURE_LIMIT=3, PARAEVAL_LOGIN_LOCKOUT_MINUTES=15
)
def test_many_different_bad_tokens_from_one_address_are_limited_but_a_good_one_is_served(staff_user) -> None:
    answers = [
        Client(REMOTE_ADDR="203.0.113.8", HTTP_AUTHORIZATION=f"Token {index:08d}" + "a" * 32).get("/api/campaigns/")
        for index in range(4)
    ]
    assert [answer.status_code for answer in answers] == [401, 401, 429, 429]
    assert answers[2].json() == {
        "detail": "Too many failed token authentications from your address (3): try again in 15 minutes."
    }
    good_key = token_client(staff_user)._credentials["HTTP_AUTHORIZATION"]
    assert Client(REMOTE_ADDR="203.0.113.8", HTTP_AUTHORIZATION=good_key).get("/api/campaigns/").status_code == 200


@override_settings(PARAEVAL_API_USER_RATE="3/min")
def test_the_api_throttles_each_account_with_a_json_429(staff_user) -> None:
    client = token_client(staff_user)
    answers = [client.get("/api/campaigns/") for _ in range(4)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    throttled = answers[3]
    assert throttled["Content-Type"] == "application/json"
    assert re.fullmatch(r"Request was throttled\. Expected available in (\d+) seconds?\.", throttled.json()["detail"])
    assert 1 <= int(throttled["Retry-After"]) <= 60


INCREMENT = """
import sys
from django.conf import settings
settings.configure()
from paraeval.cache import SharedFileCache
cache = SharedFileCache(sys.argv[1], {})
for _ in range(int(sys.argv[2])):
    cache.incr("counter")
"""


def test_the_file_cache_counts_exactly_across_processes(tmp_path: Path) -> None:
    """Four processes incrementing one counter lose nothing (Django's FileBasedCache would)."""
    location = str(tmp_path / "limits")
    cache = SharedFileCache(location, {})
    assert cache.add("counter", 0, 600)
    workers = [subprocess.Popen([sys.executable, "-c", INCREMENT, location, "150"], cwd=ROOT) for _ in range(4)]
    assert [worker.wait(120) for worker in workers] == [0, 0, 0, 0]
    assert cache.get("counter") == 600


def test_an_increment_keeps_the_window_of_the_counter(tmp_path: Path) -> None:
    """Django's incr re-sets with the default timeout (300 s): a 1-day window would end early."""
    cache = SharedFileCache(str(tmp_path / "limits"), {})
    cache.add("window", 0, 86_400)
    assert cache.incr("window") == 1
    with open(cache._key_to_file("window"), "rb") as handle:
        assert pickle.load(handle) - time.time() > 86_000


def test_a_real_volunteer_arriving_during_a_burst_still_gets_pairs(settings) -> None:
    """A script's burst of starts cannot take a campaign away from people.

    The start limit stops the burst at 30 volunteers from one address; those that never answer
    hold their first pair for only PARAEVAL_FIRST_RESERVATION_MINUTES; a volunteer from another
    address gets a pair during the burst, and after the short reservation the pairs the script
    reserved are free again.
    """
    settings.PARAEVAL_START_RATE = "30/10m"
    settings.PARAEVAL_FIRST_RESERVATION_MINUTES = 3
    campaign = make_campaign(slug="burst", quota=50, judges_per_pair=1, reservation_minutes=20)
    for _ in range(40):
        make_pair(campaign)
    script = Client(REMOTE_ADDR="203.0.113.7")
    refused = 0
    for _ in range(60):
        script.cookies.clear()
        response = script.post("/c/burst/", {"consent": "on", "english_level": "good"})
        if response.status_code == 429:
            refused += 1
            continue
        token = response.url.split("/")[2]
        script.post(f"/v/{token}/guidelines/")
        assert script.get(f"/v/{token}/").status_code == 200  # reserves a pair, never answers
    assert refused == 30
    held = Assignment.objects.filter(pair__campaign=campaign, answered_at__isnull=True)
    assert held.count() == 30
    assert {a.expires_at - a.shown_at for a in held} == {timedelta(minutes=3)}

    person = Client(REMOTE_ADDR="198.51.100.20")
    response = person.post("/c/burst/", {"consent": "on", "english_level": "native"})
    token = response.url.split("/")[2]
    person.post(f"/v/{token}/guidelines/")
    page = person.get(f"/v/{token}/").content.decode()
    assert 'name="pair" value="' in page
    # Four minutes later the script's reservations have lapsed: the whole pool is free again.
    volunteer = Volunteer.objects.select_related("campaign").get(token=token)
    later = timezone.now() + timedelta(minutes=4)
    free = [
        pair.pk
        for pair in Pair.objects.filter(campaign=campaign)
        if allocation.is_available(pair.pk, volunteer, campaign, later)
    ]
    assert len(free) == 40
