"""One definition per count, said on the page."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotate.labels import Label
from tests.builders import make_campaign, make_judgement, make_pair, make_training_pairs, make_volunteer
from tests.test_campaign_http import current_pair_id, finish_training, post_answer, start

pytestmark = pytest.mark.django_db


def test_the_end_page_counts_the_pairs_the_welcome_page_promised(client: Client) -> None:
    campaign = make_campaign(slug="promise", quota=3, check_positions="2")
    make_training_pairs(campaign, 1)
    for _ in range(3):
        make_pair(campaign)
    make_pair(campaign, is_check=True, expected_label=Label.SAME_MEANING.value)
    welcome = client.get("/c/promise/").content.decode()
    promised = int(re.search(r"Then <strong>(\d+) pairs</strong> to judge", welcome).group(1))
    assert promised == 4  # three campaign pairs and the check among them
    volunteer = start(client, campaign)
    finish_training(client, volunteer, 1)
    for _ in range(promised):
        post_answer(client, volunteer, current_pair_id(client, volunteer))
    end = client.get(f"/v/{volunteer.token}/")
    assert end.status_code == 302 and end.url == f"/v/{volunteer.token}/done/"
    page = client.get(end.url).content.decode()
    assert f"You judged <strong>{promised} pairs</strong>, after the training." in page


def test_the_staff_home_and_exports_page_count_what_the_dashboard_and_api_count(admin_client: Client) -> None:
    campaign = make_campaign(slug="counted")
    pairs = [make_pair(campaign) for _ in range(3)]
    check = make_pair(campaign, is_check=True, expected_label=Label.SAME_MEANING.value)
    volunteer = make_volunteer(campaign)
    for pair in pairs:
        make_judgement(pair, volunteer)
    make_judgement(check, volunteer, is_check=True)
    api = admin_client.get("/api/campaigns/counted/").json()
    assert (api["pairs"], api["judgements"]) == (3, 3)
    for url in ("/staff/", "/staff/export/"):
        page = admin_client.get(url).content.decode()
        row = re.search(r'<tr data-campaign="counted">(.*?)</tr>', page, re.S).group(1)
        assert re.findall(r'<td class="num" data-label="(?:Pairs|Judgements):">(\d+)</td>', row) == ["3", "3"], url
        assert "training and attention-check pairs and their answers are left out" in page, url
