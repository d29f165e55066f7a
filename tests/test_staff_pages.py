"""The site's own pages over HTTP: the home page, the staff hub, exports, the API's root and docs,
the admin's links, and the staff navigation bar on every staff page."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache, caches
from django.utils.timezone import localtime
from pytest_django.asserts import assertContains, assertNotContains

from annotate.models import Campaign
from scoring.reports.tables import agreement_table
from tests.builders import (
    make_campaign,
    make_judgement,
    make_pair,
    make_score,
    make_staff,
    make_training_pairs,
    make_volunteer,
)

pytestmark = pytest.mark.django_db

NAV_LINKS = [
    ("/staff/", "Staff home"),
    ("/staff/dashboard/", "Dashboard"),
    ("/staff/status/", "Scoring status"),
    ("/staff/export/", "Exports"),
    ("/api/docs/", "API docs"),
    ("/docs/", "Documentation"),
    ("/admin/", "Admin"),
]


@pytest.fixture(autouse=True)
def _site(settings) -> None:
    settings.SITE_URL = "https://paraeval.example.org"
    cache.clear()
    if "limits" in settings.CACHES:  # rate-limit counters outlive a test run: start from zero
        caches["limits"].clear()


@pytest.fixture
def staff_client(client):  # type: ignore[no-untyped-def]
    user = make_staff("researcher", "pw-for-tests")
    client.force_login(user)
    return client


@pytest.fixture
def campaigns() -> None:
    demo = make_campaign(slug="demo", name="Demo campaign")
    make_training_pairs(demo)
    pairs = [make_pair(demo) for _ in range(3)]
    volunteer = make_volunteer(demo)
    make_judgement(pairs[0], volunteer)
    make_campaign(slug="pilot", name="Pilot", is_open=False)


def nav(html: str) -> list[tuple[str, str, bool]]:
    """(href, text, is current) of every link of the staff navigation bar."""
    block = re.search(r'<nav class="staff-nav" aria-label="Staff pages">(.*?)</nav>', html, re.S)
    assert block, "no staff navigation bar"
    links = re.findall(r'<a href="([^"]+)"( aria-current="page")?>([^<]+)</a>', block.group(1))
    return [(href, text, bool(current)) for href, current, text in links]


def assert_nav(html: str, current: str) -> None:
    assert html.count('class="staff-nav"') == 1
    assert nav(html) == [(href, text, text == current) for href, text in NAV_LINKS]


# --- the home page ------------------------------------------------------------------------------


def test_home_for_a_visitor_is_short_and_neutral(client, campaigns) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assertContains(response, "<h1>ParaEval</h1>", html=True)
    assertContains(response, "<p>If you were invited to judge sentences, open the link you were given.</p>", html=True)
    assertContains(response, '<a href="/admin/login/?next=/staff/">log in</a>', html=True)
    # Nothing staff-only: no campaign list, no links to campaigns, no navigation bar.
    for text in ("Demo campaign", "/c/demo/", "Pilot", "staff-nav", "/staff/dashboard/"):
        assertNotContains(response, text)


def test_home_links_the_public_campaign_when_configured(client, campaigns, settings) -> None:
    settings.PARAEVAL_PUBLIC_CAMPAIGN = "demo"
    response = client.get("/")
    assertContains(
        response, '<a class="button" id="public-campaign" href="/c/demo/">Take part in Demo campaign</a>', html=True
    )
    assertNotContains(response, "If you were invited")
    settings.PARAEVAL_PUBLIC_CAMPAIGN = "pilot"  # closed: not offered
    response = client.get("/")
    assertNotContains(response, "public-campaign")
    assertContains(response, "If you were invited")


def test_public_campaign_setting_is_read_from_the_environment(monkeypatch) -> None:
    import importlib

    import paraeval.settings

    monkeypatch.setenv("PARAEVAL_PUBLIC_CAMPAIGN", "spring-2025")
    assert importlib.reload(paraeval.settings).PARAEVAL_PUBLIC_CAMPAIGN == "spring-2025"
    monkeypatch.delenv("PARAEVAL_PUBLIC_CAMPAIGN")
    assert importlib.reload(paraeval.settings).PARAEVAL_PUBLIC_CAMPAIGN == ""


def test_home_for_staff_is_the_hub(staff_client, campaigns) -> None:
    response = staff_client.get("/")
    assert response.status_code == 200
    assertContains(response, '<h1 class="staff-title">Staff home</h1>', html=True)
    assertContains(
        response,
        '<a class="volunteer-link" href="https://paraeval.example.org/c/demo/">https://paraeval.example.org/c/demo/</a>',
        html=True,
    )
    assert_nav(response.content.decode(), "Staff home")


# --- the staff hub --------------------------------------------------------------------------------


def test_staff_hub_lists_campaigns_with_links_and_every_staff_page(staff_client, campaigns) -> None:
    response = staff_client.get("/staff/")
    assert response.status_code == 200
    html = response.content.decode()
    assert_nav(html, "Staff home")
    rows = re.findall(r'<tr data-campaign="([^"]+)">', html)
    assert rows == ["demo", "pilot"]  # open campaigns first
    assertContains(
        response,
        '<tr data-campaign="demo"><th scope="row">Demo campaign <span class="muted small campaign-key">(demo, created '
        f"{localtime(Campaign.objects.get(slug='demo').created_at):%Y-%m-%d})</span></th><td>open</td>"
        '<td class="num" data-label="Pairs:">3</td><td class="num" data-label="Judgements:">1</td>'
        '<td class="link-cell"><a class="volunteer-link" href="https://paraeval.example.org/c/demo/">'
        "https://paraeval.example.org/c/demo/</a></td>"
        '<td class="hub-actions"><a href="/staff/dashboard/?campaign=demo">Dashboard</a>'
        ' · <a href="/staff/campaigns/demo/volunteers/">Volunteers</a>'
        ' · <a href="/staff/campaigns/demo/settings/" class="settings-link">Settings</a>'
        ' · <a href="/staff/campaigns/demo/upload/" class="upload-link">Upload pairs</a>'
        ' · <a href="/staff/export/demo/?level=pairs&amp;format=csv" class="export-link">Pairs (CSV)</a>'
        ' · <a href="/staff/export/demo/?level=pairs&amp;format=jsonl" class="export-link">Pairs (JSONL)</a>'
        ' · <a href="/staff/export/demo/?level=judgements&amp;format=csv" class="export-link">Judgements (CSV)</a>'
        ' · <a href="/staff/export/demo/?level=judgements&amp;format=jsonl" class="export-link">Judgements (JSONL)</a>'
        "</td></tr>",
        html=True,
    )
    assertContains(response, '<td class="num" data-label="Pairs:">0</td>', count=1, html=True)  # pilot
    assertContains(response, "<td>closed</td>", html=True)
    pages = re.findall(r'<li><a href="([^"]+)">([^<]+)</a>', html)
    assert pages == [
        ("/staff/", "Staff home"),
        ("/staff/dashboard/", "Dashboard"),
        ("/staff/status/", "Scoring status"),
        ("/staff/export/", "Exports"),
        ("/api/docs/", "API docs"),
        ("/docs/", "Documentation"),
        ("/admin/", "Admin"),
        ("/staff/scores/import/", "Import scores"),
        ("/staff/generate/", "Generate candidates"),
        ("/staff/tuning/", "Tune a judge"),
        ("/api/", "API root"),
    ]


def test_staff_hub_without_campaigns_says_how_to_start(staff_client) -> None:
    response = staff_client.get("/staff/")
    assertContains(response, "No campaign yet. Load the demo with <code>manage.py load_demo</code>")


def test_staff_hub_counts_in_one_query(staff_client, campaigns, django_assert_max_num_queries) -> None:
    for slug in ("third", "fourth"):
        make_pair(make_campaign(slug=slug, name=slug))
    # session + user + the campaigns with both counts + which of them are full: no query per campaign.
    with django_assert_max_num_queries(4):
        assert staff_client.get("/staff/").status_code == 200


@pytest.mark.parametrize("path", ["/staff/", "/staff/export/", "/staff/dashboard/", "/staff/status/"])
def test_staff_pages_send_visitors_to_the_login(client, path) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"] == f"/admin/login/?next={path}"


def test_staff_pages_refuse_a_user_who_is_not_staff(client) -> None:
    user = get_user_model().objects.create_user("volunteer", password="pw")
    client.force_login(user)
    assert client.get("/staff/")["Location"] == "/admin/login/?next=/staff/"


# --- exports ----------------------------------------------------------------------------------------


def test_exports_page_offers_csv_and_jsonl_of_each_campaign(staff_client, campaigns) -> None:
    response = staff_client.get("/staff/export/")
    assert response.status_code == 200
    html = response.content.decode()
    assert_nav(html, "Exports")
    links = re.findall(r'<a class="button secondary export-link" href="([^"]+)">([^<]+)</a>', html)
    assert links[:4] == [
        ("/staff/export/demo/?level=pairs&amp;format=csv", "Pairs (CSV)"),
        ("/staff/export/demo/?level=pairs&amp;format=jsonl", "Pairs (JSONL)"),
        ("/staff/export/demo/?level=judgements&amp;format=csv", "Judgements (CSV)"),
        ("/staff/export/demo/?level=judgements&amp;format=jsonl", "Judgements (JSONL)"),
    ]
    assert len(links) == 8
    jsonl = staff_client.get("/staff/export/demo/?level=pairs&format=jsonl")
    assert jsonl.status_code == 200
    assert len(b"".join(jsonl.streaming_content).splitlines()) == 3


def test_dashboard_has_jsonl_export_buttons_and_the_nav(staff_client, campaigns) -> None:
    response = staff_client.get("/staff/dashboard/?campaign=demo")
    html = response.content.decode()
    assert_nav(html, "Dashboard")
    buttons = re.findall(r'<a class="button secondary" id="(export-[a-z-]+)" href="([^"]+)">([^<]+)</a>', html)
    assert buttons == [
        ("export-pairs-csv", "/staff/export/demo/?level=pairs&amp;format=csv", "Pairs (CSV)"),
        ("export-pairs-jsonl", "/staff/export/demo/?level=pairs&amp;format=jsonl", "Pairs (JSONL)"),
        ("export-judgements-csv", "/staff/export/demo/?level=judgements&amp;format=csv", "Judgements (CSV)"),
        ("export-judgements-jsonl", "/staff/export/demo/?level=judgements&amp;format=jsonl", "Judgements (JSONL)"),
    ]
    # The contents bar is filled from the sections' data-toc labels, one per section.
    assert re.findall(r'<section [^>]*id="([^"]+)"[^>]*data-toc="([^"]+)"', html) == [
        ("summary", "Counts"),
        ("section-table1", "Table 1 · Means"),
        ("section-table2", "Table 2 · Best threshold"),
        ("section-table3", "Table 3 · Edit distance"),
        ("section-worst", "Worst disagreements"),
        ("section-table4", "Table 4 · EER"),
        ("section-table5", "Table 5 · Natural threshold"),
        ("section-ranking", "Ranking"),
        ("section-topk", "Top-k"),
        ("section-agreement", "Agreement"),
        ("section-volunteers", "Volunteers"),
        ("section-paired", "Paired tests"),
        ("section-thresholds", "Threshold honesty"),
        ("section-ties", "Ties"),
        ("section-systems", "Systems"),
        ("section-distance-bins", "Distance bins"),
        ("section-ceiling", "Human ceiling"),
        ("section-calibration", "Calibration"),
        ("section-robustness", "Robustness"),
        ("section-temperature", "ParaPLUIE calibration"),
        ("section-paraphrasus", "PARAPHRASUS"),
        ("section-methods", "How to read"),
    ]
    figures = re.findall(r"Figure \d+ —", html)
    assert figures == [
        "Figure 1 —",
        "Figure 2 —",
        "Figure 3 —",
        "Figure 4 —",
        "Figure 5 —",
        "Figure 6 —",
        "Figure 7 —",
        "Figure 8 —",
    ]
    assert html.count("Click a name in the legend to hide its curve.") == 3


# --- the scoring status -----------------------------------------------------------------------------


def _scored(done: int, total: int, metrics: tuple[str, ...]) -> list:
    from scoring.pipeline import configs

    campaign = make_campaign(slug="scored")
    pairs = [make_pair(campaign) for _ in range(total)]
    rows = [configs.ensure_metric_config(configs.build(name)) for name in metrics]
    for row in rows:
        for pair in pairs[:done]:
            make_score(pair, row, 0.5)
    return rows


def test_status_says_nothing_pending_when_every_pair_is_scored(staff_client, settings, queue_dir) -> None:
    settings.PARAEVAL_METRICS = ["lev", "wer"]
    _scored(done=3, total=3, metrics=("lev", "wer"))
    response = staff_client.get("/staff/status/")
    html = response.content.decode()
    assert_nav(html, "Scoring status")
    assertContains(response, '<strong id="pending">Nothing pending</strong>', html=True)
    assertContains(response, '<span id="pairs">3 campaign pairs</span>', html=True)
    assertContains(response, '<span id="done">6 scores done</span>', html=True)
    assertNotContains(response, "to score")


def test_status_counts_pending_scores_in_singular_and_plural(staff_client, settings, queue_dir) -> None:
    settings.PARAEVAL_METRICS = ["lev"]
    _scored(done=0, total=1, metrics=("lev",))
    response = staff_client.get("/staff/status/")
    assertContains(response, '<strong id="pending">1 score pending</strong>', html=True)
    assertContains(response, '<span id="pairs">1 campaign pair</span>', html=True)
    assertContains(response, '<span id="done">0 scores done</span>', html=True)
    make_pair(make_campaign(slug="more"))
    response = staff_client.get("/staff/status/")
    assertContains(response, '<strong id="pending">2 scores pending</strong>', html=True)


# --- the agreement caption, pluralised -------------------------------------------------------------


@pytest.mark.parametrize(
    ("pairs", "text"),
    [(0, "0 pairs have two"), (1, "1 pair has two"), (2, "2 pairs have two")],
)
def test_agreement_caption_is_pluralised(pairs: int, text: str) -> None:
    from types import SimpleNamespace

    from scoring.analysis.report import Agreement, CoefficientValue

    coefficient = CoefficientValue(value=None, observed=None, chance=None, pairs=0, reason="x")
    agreement = Agreement(
        pairs_judged=pairs,
        pairs_multi=pairs,
        judgements_per_pair=1.0,
        measurable=True,
        reason="",
        paraphrase_share=None,
        krippendorff_alpha=coefficient,
        fleiss_kappa=coefficient,
        gwet_ac1=coefficient,
        cohen_kappa=coefficient,
    )
    caption = agreement_table(SimpleNamespace(agreement=agreement)).caption  # only .agreement is read
    assert caption.startswith(text + " or more graded judgements (mean 1.00 judgements per judged pair).")


# --- the REST API's root and docs -------------------------------------------------------------------


def test_api_root_answers_staff_with_the_collections(staff_client) -> None:
    response = staff_client.get("/api/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert response.json() == {
        name: f"http://testserver/api/{name}/"
        for name in ("campaigns", "pairs", "judgements", "metric-configs", "scores")
    }


def test_api_root_refuses_anonymous_callers(client) -> None:
    response = client.get("/api/", HTTP_ACCEPT="application/json")
    assert response.status_code == 401
    assert response.json() == {"detail": "Authentication credentials were not provided."}


@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_api_docs_send_a_visitor_to_the_login_page(client, path) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"] == f"/admin/login/?next={path}"
    # A script that sent a wrong token still gets DRF's 401 and its reason.
    response = client.get(path, HTTP_AUTHORIZATION="Token not-a-token")
    assert response.status_code == 401


def test_api_docs_page_has_the_nav_and_no_inline_code(staff_client) -> None:
    response = staff_client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert_nav(html, "API docs")
    assert "<style" not in html
    assert re.findall(r"<script[^>]*>\s*[^<\s]", html) == []  # every script has a src, none has a body
    script = staff_client.get("/api/docs/?script=")
    assert script.status_code == 200 and b"SwaggerUIBundle" in script.content


# --- the admin ------------------------------------------------------------------------------------


def test_admin_view_site_goes_to_the_home_page_and_the_index_links_the_staff_pages(staff_client) -> None:
    user = get_user_model().objects.get(username="researcher")
    user.is_superuser = True
    user.save()
    response = staff_client.get("/admin/")
    assert response.status_code == 200
    assertContains(response, '<a href="/">View site</a>', html=True)
    assertContains(response, "<title>Site administration | ParaEval admin</title>", html=True)
    assert_nav(response.content.decode(), "Admin")
    page = staff_client.get("/admin/annotate/campaign/")
    assert_nav(page.content.decode(), "Admin")


def test_admin_login_page_shows_no_staff_nav(client) -> None:
    response = client.get("/admin/login/")
    assert response.status_code == 200
    assertNotContains(response, "staff-nav")
