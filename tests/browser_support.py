"""Helpers shared by the headless-Chromium tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from selenium.common.exceptions import WebDriverException
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait


def _new_page_loaded(browser: WebDriver) -> bool:
    try:
        return browser.execute_script("return document.readyState === 'complete' && !window.__leftPage")
    except WebDriverException:  # asked in the middle of the navigation
        return False


@contextmanager
def navigation(browser: WebDriver, timeout: float = 30) -> Iterator[None]:
    """Wait, after the block, until a new document has replaced the current one and loaded.

    Marks the current document instead of watching one of its elements go stale: during a
    navigation Chromium may answer a question about an old element with an error that is not
    "stale element" ("Node with given id does not belong to the document", seen on a busy
    machine).
    """
    browser.execute_script("window.__leftPage = true")
    yield
    WebDriverWait(browser, timeout).until(_new_page_loaded)
