"""Fixtures shared by the whole suite: a headless Chromium, the Redis URL, database guards."""

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
    """URL of the real Redis used by queue and worker tests (a database of its own)."""
    return os.environ.get("REDIS_URL_TESTS", "redis://127.0.0.1:6379/15")


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
