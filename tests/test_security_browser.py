"""Under the strict Content-Security-Policy, Chromium reports no violation and the pages still work.

A listener for ``securitypolicyviolation`` is installed through the DevTools protocol before
each document's own scripts (it is exempt from the policy), so every violation is counted:
blocked scripts, styles, images, fonts, frames and inline style attributes.
"""

from __future__ import annotations

import pytest
from django.core.cache import cache
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser_support import navigation
from tests.builders import make_scored_campaign, make_staff, make_volunteer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "csp-test-password-123"
LISTENER = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  const where = e.sourceFile + ':' + e.lineNumber;
  window.__cspViolations.push(e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline') + ' at ' + where);
});
"""


def wait(browser: WebDriver, condition, timeout: float = 20):  # type: ignore[no-untyped-def]
    return WebDriverWait(browser, timeout, poll_frequency=0.2).until(condition)


def violations(browser: WebDriver) -> list[str]:
    return browser.execute_script("return window.__cspViolations || ['listener missing']")


def test_no_page_breaks_the_content_security_policy(browser: WebDriver, live_server, artifacts_dir) -> None:
    cache.clear()
    built = make_scored_campaign(slug="csp-demo", name="CSP demo", judges=3, judges_per_pair=4)
    make_staff("staff", PASSWORD)
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": LISTENER})
    seen: dict[str, list[str]] = {}

    # A volunteer: the welcome page, a training pair.
    browser.get(f"{live_server.url}/c/csp-demo/")
    assert browser.execute_script("return document.querySelector('dialog') !== null")
    seen["welcome"] = violations(browser)
    volunteer = make_volunteer(built.campaign)
    browser.get(f"{live_server.url}/v/{volunteer.token}/")
    wait(browser, ec.presence_of_element_located((By.ID, "answer-form")))
    seen["pair"] = violations(browser)
    # The page's script runs (keyboard answers, the guidelines dialog).
    browser.find_element(By.CSS_SELECTOR, "[data-guidelines-open]").click()
    assert browser.execute_script("return document.getElementById('guidelines-dialog').open")

    # Staff: login, the dashboard with its charts, the status page, the API docs.
    browser.get(f"{live_server.url}/admin/login/?next=/staff/dashboard/?campaign=csp-demo")
    browser.find_element(By.ID, "id_username").send_keys("staff")
    browser.find_element(By.ID, "id_password").send_keys(PASSWORD)
    seen["login"] = violations(browser)
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    roc = "chart-roc"
    wait(
        browser,
        lambda b: b.execute_script(
            "const c = document.getElementById(arguments[0]); return !!(c && window.Chart && Chart.getChart(c))", roc
        ),
    )
    painted = browser.execute_script(
        """const c = document.getElementById(arguments[0]);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n;""",
        roc,
    )
    assert painted > 500
    assert built.configs  # the charts drew the scored metrics
    browser.save_screenshot(str(artifacts_dir / "csp_dashboard.png"))
    seen["dashboard"] = violations(browser)

    browser.get(f"{live_server.url}/staff/status/")
    seen["status"] = violations(browser)

    browser.get(f"{live_server.url}/api/docs/")
    wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, ".swagger-ui .opblock")))
    assert "/api/campaigns/" in browser.find_element(By.CSS_SELECTOR, ".swagger-ui").text
    browser.save_screenshot(str(artifacts_dir / "csp_api_docs.png"))
    seen["api docs"] = violations(browser)

    browser.get(f"{live_server.url}/api/redoc/")
    wait(browser, ec.presence_of_element_located((By.CSS_SELECTOR, ".api-content h1")))
    assert "ParaEval API" in browser.find_element(By.CSS_SELECTOR, ".api-content h1").text
    # Our ReDoc page links no outside fonts; ReDoc's script itself asks for its logo on a CDN,
    # which the policy rightly blocks (nothing is loaded from outside the site).
    blocked = sorted({line.split(" ")[2].split("?")[0] for line in violations(browser)})
    assert blocked == ["https://cdn.redoc.ly/redoc/logo-mini.svg"]

    assert seen == {page: [] for page in seen}
