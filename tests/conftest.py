"""Fixtures shared by the whole suite: a headless Chromium, the Redis URL, database guards;
and the end-of-run list of skipped tests grouped by reason."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"

# Flags that keep Chromium quiet on a machine with no network (README of the environment).
CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--window-size=1280,1000",
]


@pytest.fixture
def artifacts_dir() -> Path:
    """Folder for screenshots and other artifacts a test leaves for people to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def _chrome_driver():  # type: ignore[no-untyped-def]
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or "/usr/bin/chromium"
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not (os.path.exists(binary) and os.path.exists(driver_path)):
        pytest.fail("Chromium and chromedriver are required: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.implicitly_wait(0)
    return driver


@pytest.fixture
def browser() -> Iterator[object]:
    """A headless Chromium driven by Selenium; closed after the test."""
    driver = _chrome_driver()
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser_factory() -> Iterator[object]:
    """Open several independent browsers in one test (e.g. staff and a volunteer)."""
    drivers = []

    def open_browser():  # type: ignore[no-untyped-def]
        driver = _chrome_driver()
        drivers.append(driver)
        return driver

    try:
        yield open_browser
    finally:
        for driver in drivers:
            driver.quit()


@pytest.fixture
def redis_url() -> str:
    """URL of the real Redis used by queue and worker tests (a database of its own).

    Skips the test, with the reason, when no Redis server answers there.
    """
    import redis

    url = os.environ.get("REDIS_URL_TESTS", "redis://127.0.0.1:6379/15")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2).ping()
    except redis.RedisError as error:
        pytest.skip(f"needs a Redis server at {url} (set REDIS_URL_TESTS or start redis-server): {error}")
    return url


@pytest.fixture
def redis_db(redis_url: str) -> Iterator[object]:
    """A client of the tests' own Redis database (``redis_url``), empty before and after the test."""
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushdb()  # our own database number only (REDIS_URL_TESTS)
    yield client
    client.flushdb()


@pytest.fixture
def llama_server(tmp_path: Path) -> Iterator[object]:
    """llama-cpp-python's OpenAI-compatible server on the embedded SmolLM2 GGUF (skips, saying
    why, where it is not installed); stopped at the end, woken first if a test paused it."""
    import signal

    from tests.served_support import LlamaServer, embedded_model, require_llama_server

    require_llama_server()
    started = LlamaServer(embedded_model(), tmp_path, alias="SmolLM2-135M-Instruct-Q4_1").start()
    yield started
    if started.process is not None and started.process.poll() is None:
        started.process.send_signal(signal.SIGCONT)
    started.stop()


@pytest.fixture
def require_postgres(db: None) -> None:
    """Skip, with the reason, a test that needs PostgreSQL's concurrency when on SQLite."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: run with DATABASE_URL=postgres://postgres@127.0.0.1:5432/test")


@pytest.fixture
def queue_dir(tmp_path: Path) -> Iterator[Path]:
    """This process sends to a filesystem broker of its own; the folder of its messages."""
    from tests.workers_support import filesystem_broker  # the Celery app, only for tests that ask

    with filesystem_broker(tmp_path) as folder:
        yield folder


@pytest.fixture(autouse=True)
def _fresh_scoring_caches() -> Iterator[None]:
    """Each test reads the enabled configurations' rows afresh (they are cached per process).

    Rows are rolled back between tests and may come back with other ids; the cache would
    otherwise hand a test the previous test's ids.
    """
    from scoring.pipeline import configs

    configs.forget_enabled()
    yield
    configs.forget_enabled()


def _skip_reason(report: pytest.TestReport) -> str:
    """The reason a skipped test gave, without pytest's "Skipped: " prefix."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """End the run with the skipped tests grouped by reason (no PostgreSQL, no Redis, no corpora),
    so that a run that quietly lost its PostgreSQL-only tests says so where people look."""
    skipped = [report for report in terminalreporter.stats.get("skipped", []) if report.skipped]
    if not skipped:
        return
    by_reason: dict[str, list[str]] = {}
    for report in skipped:
        by_reason.setdefault(_skip_reason(report), []).append(report.nodeid)
    terminalreporter.section(f"{len(skipped)} skipped tests, by reason")
    for reason, nodeids in sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0])):
        terminalreporter.write_line(f"{len(nodeids)} skipped: {reason}")
        for nodeid in sorted(nodeids):
            terminalreporter.write_line(f"    {nodeid}")
