"""While the analyses cache (Redis) is down, the report API and the dashboard's data are
computed now and say so; the meta-evaluation is a 503 with the reason. Never a 500.

A Redis server of the test's own serves the ``analyses`` cache on a port of its own; the test
stops it (a real outage: connections refused), then starts it again on the same port.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.test import Client

from tests.api_support import token_client
from tests.builders import make_scored_campaign, make_staff
from tests.workers_support import wait_for

pytestmark = pytest.mark.django_db

# Ports this test may listen on (one free one is taken).
PORTS = range(18210, 18230)
REPORT_DOWN = "The analyses cache is unavailable (ConnectionError): this report was computed now and not kept."
INTERVALS_DOWN = (
    "The analyses cache is unavailable (ConnectionError): the report was computed now, without "
    "the 95% intervals (the cpu queue keeps them there); they come back with the cache."
)
META_DOWN = (
    "The analyses cache is unavailable (ConnectionError): the paired comparisons are computed "
    "on the cpu queue and kept there, so none can be served now; ask again when the cache is back."
)


def _free_port() -> int:
    for port in PORTS:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.skip(f"no free port in {PORTS}")


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


class RedisServer:
    """A throw-away Redis on one port: ``start()`` and ``stop()`` as often as a test likes."""

    def __init__(self, port: int, folder: Path) -> None:
        self.port = port
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"],
            cwd=self.folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: _pings(redis.Redis.from_url(self.url)), timeout=20, what="the test Redis server")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def analyses_redis(settings, tmp_path: Path, queue_dir: Path) -> Iterator[RedisServer]:
    """The ``analyses`` cache on a Redis of this test's own (started); stopped afterwards."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = RedisServer(_free_port(), tmp_path)
    server.start()
    settings.CACHES = {
        **settings.CACHES,
        "analyses": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": server.url,
            "KEY_PREFIX": "paraeval-analyses",
        },
    }
    try:
        yield server
    finally:
        server.stop()


def _numbers(body: dict) -> dict:
    """The report without what changes from one computation to the next."""
    return {key: value for key, value in body.items() if key not in ("generated_at", "cache")}


def test_the_report_api_is_computed_and_says_so_while_the_cache_is_down(analyses_redis: RedisServer) -> None:
    make_scored_campaign(slug="cache-down")
    client = token_client(make_staff("staff-cache"))
    url = "/api/campaigns/cache-down/report/?resamples=50"
    before = client.get(url)
    assert before.status_code == 200
    assert before.json()["cache"] == {"state": "available", "message": ""}
    assert _keys(analyses_redis)  # the report was kept in this Redis

    analyses_redis.stop()
    during = client.get(url)
    assert during.status_code == 200
    assert during.json()["cache"] == {"state": "unavailable", "message": REPORT_DOWN}
    assert _numbers(during.json()) == _numbers(before.json())  # the same report, computed now

    meta = client.get("/api/campaigns/cache-down/meta-evaluation/?resamples=50")
    assert meta.status_code == 503
    assert meta.json()["state"] == "unavailable" and meta.json()["message"] == META_DOWN

    analyses_redis.start()  # back, empty: computed and kept again
    after = client.get(url)
    assert after.status_code == 200 and after.json()["cache"] == {"state": "available", "message": ""}
    assert _keys(analyses_redis)


def test_the_dashboard_data_is_computed_without_intervals_while_the_cache_is_down(
    analyses_redis: RedisServer,
) -> None:
    make_scored_campaign(slug="dash-down")
    client = Client(raise_request_exception=False)
    client.force_login(make_staff("staff-dash"))
    analyses_redis.stop()
    response = client.get("/staff/dashboard/data/", {"campaign": "dash-down"})
    assert response.status_code == 200
    body = response.json()
    assert body["cache"] == {"state": "unavailable", "message": REPORT_DOWN}
    assert body["bootstrap"]["state"] == "unavailable" and body["bootstrap"]["message"] == INTERVALS_DOWN
    assert body["counts"]["pairs"] == 24  # the numbers are there
    # Polling an unchanged campaign during the outage costs no recomputation: 304.
    again = client.get("/staff/dashboard/data/", {"campaign": "dash-down"}, HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304
    # When the cache is back the tag changes: the page fetches the report with its intervals queued.
    analyses_redis.start()
    back = client.get("/staff/dashboard/data/", {"campaign": "dash-down"}, HTTP_IF_NONE_MATCH=response["ETag"])
    assert back.status_code == 200
    assert back.json()["cache"]["state"] == "available" and back.json()["bootstrap"]["state"] == "computing"


def _keys(server: RedisServer) -> list[bytes]:
    return list(redis.Redis.from_url(server.url).scan_iter("paraeval-analyses:*"))


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_dashboard_page_says_the_cache_is_down_in_the_browser(analyses_redis: RedisServer, browser, live_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.conftest import ARTIFACTS

    make_scored_campaign(slug="page-down")
    make_staff("staff-page", "cache-down-password")
    analyses_redis.stop()
    browser.get(f"{live_server.url}/admin/login/?next=/staff/dashboard/%3Fcampaign%3Dpage-down")
    browser.find_element(By.ID, "id_username").send_keys("staff-page")
    browser.find_element(By.ID, "id_password").send_keys("cache-down-password")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    status = WebDriverWait(browser, 30).until(ec.visibility_of_element_located((By.ID, "intervals-status")))
    assert status.text == INTERVALS_DOWN
    assert browser.find_element(By.ID, "load-error").is_displayed() is False
    assert browser.find_element(By.ID, "count-pairs").text == "24"
    # The paired comparisons come from the cpu queue through the cache: the page says they cannot.
    WebDriverWait(browser, 30).until(ec.text_to_be_present_in_element((By.ID, "meta-status"), META_DOWN))
    ARTIFACTS.mkdir(exist_ok=True)
    for width, height in ((1366, 768), (390, 844)):
        browser.set_window_size(width, height)
        browser.execute_script("window.scrollTo(0, 0)")
        browser.save_screenshot(str(ARTIFACTS / f"dashboard-cache-down-{width}x{height}.png"))
