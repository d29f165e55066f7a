"""A campaign without pairs says it is empty and invites nobody; campaigns that share a name are
told apart (by their slug) wherever staff choose one."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils.timezone import localtime

from tests.builders import make_campaign, make_pair, make_staff, make_training_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client() -> Client:
    client = Client()
    client.force_login(make_staff("staff", "pw"))
    return client


def test_a_new_campaign_without_pairs_is_empty_not_full_nor_done(staff_client: Client) -> None:
    campaign = make_campaign(slug="fresh", name="Fresh")
    make_training_pairs(campaign)  # training pairs are not pairs to judge
    page = staff_client.get("/staff/campaigns/fresh/settings/").content.decode()
    assert '<span id="campaign-state" data-state="empty">empty (no pairs yet: not open to volunteers)</span>' in page
    assert '<dd data-count="eta">— (no pairs yet)</dd>' in page
    assert "full (every place taken or done)" not in page
    hub = staff_client.get("/staff/").content.decode()
    assert "<td><span data-empty>empty (no pairs yet)</span></td>" in hub

    make_pair(campaign)
    page = staff_client.get("/staff/campaigns/fresh/settings/").content.decode()
    assert '<span id="campaign-state" data-state="open">open</span>' in page


def test_the_public_home_invites_to_no_campaign_without_pairs(client: Client) -> None:
    campaign = make_campaign(slug="fresh", name="Fresh", is_public=True)
    page = client.get("/").content.decode()
    assert "public-campaign" not in page
    assert "If you were invited to judge sentences, open the link you were given." in page
    make_pair(campaign)
    page = client.get("/").content.decode()
    assert '<a class="button" id="public-campaign" href="/c/fresh/">Take part in Fresh</a>' in page


def test_two_campaigns_of_one_name_are_told_apart_in_menus_and_lists(staff_client: Client) -> None:
    first = make_campaign(slug="pilot-a", name="Pilot")
    second = make_campaign(slug="pilot-b", name="Pilot")
    for campaign in (first, second):
        make_pair(campaign)
    dashboard = staff_client.get("/staff/dashboard/", {"campaign": "pilot-b"}).content.decode()
    assert '<option value="pilot-a">Pilot (pilot-a)</option>' in dashboard
    assert '<option value="pilot-b" selected>Pilot (pilot-b)</option>' in dashboard
    scores = staff_client.get("/staff/scores/import/").content.decode()
    assert re.search(r'<option value="pilot-a">Pilot \(pilot-a\)</option>', scores)
    assert re.search(r'<option value="pilot-b">Pilot \(pilot-b\)</option>', scores)
    for url in ("/staff/", "/staff/export/"):
        page = staff_client.get(url).content.decode()
        for campaign in (first, second):
            created = f"{localtime(campaign.created_at):%Y-%m-%d}"
            key = f'<span class="muted small campaign-key">({campaign.slug}, created {created})</span>'
            assert f'<th scope="row">Pilot {key}</th>' in page
    # Each download is named by the campaign's slug, which no two campaigns share.
    response = staff_client.get("/staff/export/pilot-a/", {"level": "pairs", "format": "csv"})
    assert 'filename="pilot-a-pairs-' in response["Content-Disposition"]
    first_line = b"".join(response.streaming_content).decode().splitlines()[1]
    assert first_line.startswith("pilot-a,")
