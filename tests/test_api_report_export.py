"""/api/campaigns/<slug>/report/ (the dashboard's analyses) and /api/campaigns/<slug>/export/."""

from __future__ import annotations

import json

import pytest

from scoring.reports.dataset import Filters
from scoring.reports.service import campaign_report
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_judgement, make_pair, make_scored_campaign
from tests.export_support import export_text, read_csv, read_jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored():
    return make_scored_campaign(slug="reported")


# --- Report --------------------------------------------------------------------------------


def test_report_is_the_dashboards_report(staff_api, scored):
    response = staff_api.get("/api/campaigns/reported/report/?resamples=0")
    assert response.status_code == 200
    body = response.json()
    expected = json.loads(json.dumps(campaign_report(scored.campaign.pk, resamples=0, use_cache=False).as_json()))
    assert body["campaign"] == {"id": scored.campaign.pk, "slug": "reported", "name": scored.campaign.name}
    assert body["version"] == expected["version"]
    for key in ("filters", "counts", "subsets", "metrics", "results", "tables", "agreement", "volunteers"):
        assert body[key] == expected[key], key


def test_report_computes_the_two_way_intervals_only_when_asked(staff_api, scored):
    """They cost several times the pairs-only ones: off the synchronous API unless two_way=1."""
    from scoring.analysis.rater_bootstrap import NOT_ASKED_REASON

    def raters(query):
        response = staff_api.get(f"/api/campaigns/reported/report/?resamples=30{query}")
        assert response.status_code == 200, response.json()
        return [subset["raters"] for metric in response.json()["results"].values() for subset in metric.values()]

    plain = [value for value in raters("") if value is not None]
    assert plain and all(value["two_way"] is None and value["reason"] == NOT_ASKED_REASON for value in plain)
    assert all(value["pearson"] is not None or value["spearman"] is None for value in plain)
    asked = [value for value in raters("&two_way=1") if value is not None]
    assert asked and all(value["two_way"] is not None and value["reason"] is None for value in asked)
    assert staff_api.get("/api/campaigns/reported/report/?two_way=maybe").status_code == 400


def test_report_filters_are_passed_on(staff_api, scored):
    query = "reference=gold&origin=mrpc&english_level=native&date_from=2020-01-01&date_to=2999-12-31&resamples=0"
    response = staff_api.get(f"/api/campaigns/reported/report/?{query}")
    assert response.status_code == 200, response.json()
    assert response.json()["filters"] == {
        "reference": "gold",
        "origin": "mrpc",
        "english_level": "native",
        "date_from": "2020-01-01",
        "date_to": "2999-12-31",
        "exclude_flagged": False,
    }
    expected = campaign_report(
        scored.campaign.pk,
        filters=Filters.build(reference="gold", origin="mrpc", english_level="native"),
        resamples=0,
        use_cache=False,
    )
    assert response.json()["counts"] == json.loads(json.dumps(expected.as_json()["counts"]))


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("reference=majority", "reference"),
        ("english_level=fluent", "english_level"),
        ("date_from=yesterday", "date_from"),
        ("date_from=2025-02-01&date_to=2025-01-01", "date_to"),
        ("resamples=-1", "resamples"),
    ],
)
def test_report_refuses_bad_filters_naming_them(staff_api, scored, query, field):
    response = staff_api.get(f"/api/campaigns/reported/report/?{query}")
    assert response.status_code == 400
    assert list(response.json()) == [field]


def test_report_of_unknown_campaign_is_404(staff_api):
    assert staff_api.get("/api/campaigns/nope/report/").status_code == 404


# --- Export --------------------------------------------------------------------------------


@pytest.fixture
def exported():
    campaign = make_campaign(slug="exported")
    for n in range(3):
        make_judgement(make_pair(campaign, external_id=f"e{n}", source=f'=cell {n}, "quoted"'))
    return campaign


@pytest.mark.parametrize(
    ("query", "level", "extension", "content_type"),
    [
        ("", "pairs", "csv", "text/csv; charset=utf-8"),
        ("?level=judgements", "judgements", "csv", "text/csv; charset=utf-8"),
        ("?level=pairs&format=jsonl", "pairs", "jsonl", "application/x-ndjson; charset=utf-8"),
        ("?level=judgements&format=jsonl", "judgements", "jsonl", "application/x-ndjson; charset=utf-8"),
    ],
)
def test_export_streams_the_same_rows_as_the_command(staff_api, exported, query, level, extension, content_type):
    response = staff_api.get(f"/api/campaigns/exported/export/{query}")
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == content_type
    assert response["Content-Disposition"].startswith(f'attachment; filename="exported-{level}-')
    assert response["Content-Disposition"].endswith(f'.{extension}"')
    body = b"".join(response.streaming_content).decode("utf-8")
    assert body == export_text(exported, level, extension)
    if extension == "csv":
        _, rows = read_csv(body)
        assert [row["source"] for row in rows] == [f'\'=cell {n}, "quoted"' for n in range(3)]
    else:
        assert [row["source"] for row in read_jsonl(body)] == [f'=cell {n}, "quoted"' for n in range(3)]


def test_export_ignores_the_accept_header(staff_api, exported):
    response = staff_api.get("/api/campaigns/exported/export/?format=jsonl", HTTP_ACCEPT="text/html")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/x-ndjson")


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("level=volunteers", "level", '"volunteers" is not a valid choice.'),
        ("format=xlsx", "format", '"xlsx" is not a valid choice.'),
    ],
)
def test_export_refuses_unknown_options_as_json(staff_api, exported, query, field, message):
    response = staff_api.get(f"/api/campaigns/exported/export/?{query}")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {field: [message]}


def test_export_of_unknown_campaign_is_404(staff_api):
    response = staff_api.get("/api/campaigns/nope/export/?format=csv")
    assert response.status_code == 404
    assert response.json() == {"detail": "No Campaign matches the given query."}
