"""The dashboard's stopping-rule line in a browser: "Not settled yet" with the current
always-valid interval, then "Settled: …" when the judgements that settle it arrive, without a
reload (the live poll), at 1366x768 and 390x844."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache
from selenium.webdriver.common.by import By

from annotate.models import Judgement
from scoring.reports import stopping, tasks
from tests.test_dashboard_browser import log_in_as_staff, wait
from tests.test_stopping_rule import judged_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _fresh_report_cache() -> None:
    cache.clear()


def test_the_line_turns_settled_live(browser_factory, live_server, artifacts_dir: Path) -> None:
    campaign, good, poor, rows = judged_campaign(n=200, slug="watched", name="Watched", poor_signal=2.0)
    stopping.set_rule(campaign, poor, good, 0.05, 100, close_when_settled=True)
    Judgement.objects.bulk_create(rows[:30])
    staff = browser_factory()
    staff.set_window_size(1366, 768)
    log_in_as_staff(staff, live_server)
    staff.get(f"{live_server.url}/staff/dashboard/?campaign=watched")
    line = staff.find_element(By.ID, "stopping-line")
    paraphrases = sum(row.label == "same_meaning" for row in rows[:30])
    assert line.text == (
        f"Not settled yet: waiting for 20 paraphrases and 20 non-paraphrases (now {paraphrases} and "
        f"{30 - paraphrases}) (30 judgements so far)."
    )
    why = staff.find_element(By.ID, "stopping-why").text
    assert why.startswith("Why reading this every minute is safe: the interval is always-valid: it holds the true")
    assert "stays at most 5 %" in why
    Judgement.objects.bulk_create(rows[30:50])  # both classes in, the interval still holds 0
    wait(
        staff,
        lambda b: (
            "after 50 judgements (50 labelled pairs)" in b.find_element(By.ID, "stopping-line").text
            # The line is read after the report in each poll: the next poll brings the counts level.
            and "Based on 50 judgements" in b.find_element(By.ID, "live-text").text
        ),
        timeout=20,
    )
    text = staff.find_element(By.ID, "stopping-line").text
    assert text.startswith("Not settled yet: \u0394AUC (Poor \u2212 Good) \u2212")
    assert "always-valid 95 % interval [" in text
    staff.execute_script("window.__sameDocument = true; document.getElementById('stopping').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_stopping_not_settled_1366.png"))
    staff.set_window_size(390, 844)
    staff.execute_script("document.getElementById('stopping').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_stopping_not_settled_390.png"))

    Judgement.objects.bulk_create(rows[50:])
    wait(
        staff,
        lambda b: (
            b.find_element(By.ID, "stopping-line").text.startswith("Settled:")
            and f"Based on {len(rows)} judgements" in b.find_element(By.ID, "live-text").text
        ),
        timeout=20,
    )
    assert staff.execute_script("return window.__sameDocument === true")
    text = staff.find_element(By.ID, "stopping-line").text
    assert text.startswith("Settled: Good agrees better than Poor (\u0394AUC +0.")
    assert text.endswith(" judgements.")
    assert "is-settled" in staff.find_element(By.ID, "stopping").get_attribute("class")
    staff.execute_script("document.getElementById('stopping').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_stopping_settled_390.png"))
    staff.set_window_size(1366, 768)
    staff.execute_script("document.getElementById('stopping').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_stopping_settled_1366.png"))

    # The task records it and closes the campaign; the settings page shows the record.
    assert tasks.check_settled(campaign.pk)
    staff.get(f"{live_server.url}/staff/campaigns/watched/settings/")
    settled = staff.find_element(By.ID, "stopping-settled").text
    assert "judgements (" in settled and "always-valid interval [" in settled
    closed = staff.find_element(By.ID, "stopping-closed").text
    assert "Closed by the stopping rule: Settled: Good agrees better than Poor" in closed
    assert staff.find_element(By.ID, "campaign-state").text == "closed"
    staff.execute_script("document.getElementById('stopping').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "campaign_settings_stopping_1366.png"))
    staff.set_window_size(390, 844)
    staff.execute_script("document.getElementById('stopping').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "campaign_settings_stopping_390.png"))


def test_the_group_sequential_method_is_chosen_on_the_settings_page_and_worded_on_the_dashboard(
    browser_factory, live_server, artifacts_dir: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    from scoring.models import StoppingRule

    campaign, good, poor, rows = judged_campaign(n=200, slug="looks", name="Looks", poor_signal=2.0)
    staff = browser_factory()
    staff.set_window_size(1366, 768)
    log_in_as_staff(staff, live_server)
    staff.get(f"{live_server.url}/staff/campaigns/looks/settings/")
    Select(staff.find_element(By.ID, "id_metric_a")).select_by_visible_text(poor.label)
    Select(staff.find_element(By.ID, "id_metric_b")).select_by_visible_text(good.label)
    Select(staff.find_element(By.ID, "id_method")).select_by_value("group_sequential")
    planned = staff.find_element(By.ID, "id_planned_pairs")
    planned.clear()
    planned.send_keys("100")
    staff.find_element(By.ID, "save-stopping").click()
    wait(staff, lambda b: b.find_elements(By.ID, "stopping-saved"), timeout=20)
    rule = StoppingRule.objects.get(campaign=campaign)
    assert (rule.method, rule.looks, rule.planned_pairs) == ("group_sequential", 5, 100)
    method = staff.find_element(By.ID, "stopping-method").text
    assert method == "Group-sequential O'Brien-Fleming plan (decides at planned looks): 5 looks"
    staff.execute_script("document.getElementById('stopping').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "campaign_settings_group_sequential_1366.png"))
    staff.set_window_size(390, 844)
    staff.execute_script("document.getElementById('stopping').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "campaign_settings_group_sequential_390.png"))

    Judgement.objects.bulk_create(rows[:50])
    staff.get(f"{live_server.url}/staff/dashboard/?campaign=looks")
    text = staff.find_element(By.ID, "stopping-line").text
    assert text.startswith(
        "Not settled yet (group-sequential plan): the plan decides only at its looks; next: look 3 of 5 at 62"
    ) or text.startswith("Settled at look 2 of 5 of the group-sequential plan: Good agrees better than Poor")
    why = staff.find_element(By.ID, "stopping-why").text
    assert why.startswith("Why reading this every minute is safe: the group-sequential plan decides only at its 5")
    staff.execute_script("document.getElementById('stopping').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_group_sequential_390.png"))
    staff.set_window_size(1366, 768)
    staff.execute_script("document.getElementById('stopping').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_group_sequential_1366.png"))
