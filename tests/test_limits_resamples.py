"""Bootstrap resamples are bounded (``PARAEVAL_MAX_RESAMPLES``, 10,000): 100,000 was a 500 and
20,000 took a web worker to 12.3 GB. Over the bound: a 400 (or a command error) saying the maximum."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from scoring.reports.service import FilterError, campaign_report
from tests.api_support import *  # noqa: F403
from tests.builders import make_scored_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored():
    return make_scored_campaign(slug="bounded")


@pytest.mark.parametrize("resamples", [10_001, 20_000, 100_000])
def test_the_report_api_refuses_more_resamples_than_the_maximum(staff_api, scored, resamples: int) -> None:
    response = staff_api.get(f"/api/campaigns/bounded/report/?resamples={resamples}")
    assert response.status_code == 400
    assert response.json() == {"resamples": ["At most 10000 resamples (PARAEVAL_MAX_RESAMPLES)."]}


def test_the_maximum_itself_is_accepted(staff_api, scored) -> None:
    with override_settings(PARAEVAL_MAX_RESAMPLES=20):
        response = staff_api.get("/api/campaigns/bounded/report/?resamples=20")
        assert response.status_code == 200, response.json()
        assert response.json()["bootstrap"]["resamples"] == 20
        # The setting is read at each request, below the schema's maximum too.
        refused = staff_api.get("/api/campaigns/bounded/report/?resamples=21")
    assert refused.status_code == 400
    assert refused.json() == {"resamples": "at most 20 resamples (PARAEVAL_MAX_RESAMPLES), got 21"}


def test_the_service_and_the_command_refuse_it_too(scored) -> None:
    with pytest.raises(
        FilterError, match=r"^resamples: at most 10000 resamples \(PARAEVAL_MAX_RESAMPLES\), got 10001$"
    ):
        campaign_report(scored.campaign.pk, resamples=10_001, use_cache=False)
    with pytest.raises(
        CommandError, match=r"^resamples: at most 10000 resamples \(PARAEVAL_MAX_RESAMPLES\), got 20000$"
    ):
        call_command("evaluate_metrics", "--campaign", "bounded", "--resamples", "20000")


def test_the_schema_states_the_maximum(staff_api) -> None:
    schema = staff_api.get("/api/schema/?format=json").json()
    (parameter,) = [
        p for p in schema["paths"]["/api/campaigns/{slug}/report/"]["get"]["parameters"] if p["name"] == "resamples"
    ]
    assert parameter["schema"]["maximum"] == 10_000
