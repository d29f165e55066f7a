"""Scripts that answer one pair and then wait cannot hold a campaign: a reservation holds against
a waiting volunteer only while its holder keeps answering at a human pace.

Everything goes through HTTP (Django's test client, the whole request stack, PostgreSQL). Time
passes by moving every stored moment of the campaign back (served, expires, answered), with the
default settings: 60 s of grace, a pace window of 120 s.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import F
from django.test import Client
from django.utils import timezone

from annotate.labels import Label
from annotate.models import Assignment, Campaign, Judgement, Pair, Volunteer
from tests.builders import make_campaign, make_pair
from tests.pair_page import item_on_page

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPTS = 30
PAIRS = 2 * SCRIPTS  # each script judges one pair, then holds a second: every open pair is held


def time_passes(campaign: Campaign, seconds: int) -> None:
    """Move the campaign's stored moments ``seconds`` into the past, as if that much time had gone by."""
    back = timedelta(seconds=seconds)
    Assignment.objects.filter(pair__campaign=campaign).update(
        shown_at=F("shown_at") - back, expires_at=F("expires_at") - back
    )
    Judgement.objects.filter(pair__campaign=campaign).update(
        shown_at=F("shown_at") - back, answered_at=F("answered_at") - back
    )


def arrive(client: Client, slug: str) -> tuple[Volunteer | None, str]:
    """Open the campaign link and start; (None, the page) when the campaign is full."""
    page = client.get(f"/c/{slug}/")
    if b"This study is full" in page.content:
        return None, page.content.decode()
    response = client.post(f"/c/{slug}/", {"consent": "on", "english_level": "good"})
    assert response.status_code == 302, response.content[:300]
    volunteer = Volunteer.objects.get(token=response.url.split("/")[2])
    client.post(f"/v/{volunteer.token}/guidelines/")
    return volunteer, ""


def pair_page(client: Client, volunteer: Volunteer) -> str:
    response = client.get(f"/v/{volunteer.token}/", follow=True)
    return response.content.decode()


def answer(client: Client, volunteer: Volunteer, html: str) -> None:
    response = client.post(
        f"/v/{volunteer.token}/answer/", {"pair": item_on_page(html), "label": Label.SAME_MEANING.value}
    )
    assert response.status_code == 302, response.content[:300]


def held_by(volunteers: list[Volunteer]) -> int:
    return Assignment.objects.filter(volunteer__in=volunteers, answered_at__isnull=True).count()


def test_scripts_that_answered_once_then_wait_lose_their_pairs_to_real_volunteers() -> None:
    # The attack: 30 scripts each start, answer one pair, take a second and wait. Before the
    # fix their one answer earned each the campaign's full reservation (20 minutes) with no
    # take-over: they held 30 of 30 open pairs and every real volunteer was told "full".
    campaign = make_campaign(quota=PAIRS, judges_per_pair=1)
    for _ in range(PAIRS):
        make_pair(campaign)
    scripts: list[tuple[Client, Volunteer]] = []
    for _ in range(SCRIPTS):
        client = Client()
        script, _ = arrive(client, campaign.slug)
        assert script is not None
        answer(client, script, pair_page(client, script))
        assert 'name="pair"' in pair_page(client, script)  # the second pair, reserved
        scripts.append((client, script))
    bots = [script for _, script in scripts]
    assert held_by(bots) == SCRIPTS == Pair.objects.filter(campaign=campaign, judgement_count=0).count()

    # Within the pace window a holder is presumed at work: a newcomer is told the truth.
    early, page = arrive(Client(), campaign.slug)
    assert early is None and "This study is full" in page

    # Two minutes and ten seconds later no script has answered again: 16 real volunteers
    # arrive, each is served a pair and their answer is stored.
    time_passes(campaign, 130)
    for _ in range(16):
        client = Client()
        person, page = arrive(client, campaign.slug)
        assert person is not None, page
        answer(client, person, pair_page(client, person))
        assert Judgement.objects.filter(volunteer=person, is_training=False).count() == 1
    # Each real volunteer took a script's pair over: the scripts hold 14 pairs now.
    still_held = Assignment.objects.filter(volunteer__in=bots, answered_at__isnull=True, expires_at__gt=timezone.now())
    assert still_held.count() == SCRIPTS - 16
    # The scripts come back and answer whatever they are shown: no pair gets a second judge.
    for client, script in scripts:
        html = pair_page(client, script)
        if 'name="pair"' in html:
            answer(client, script, html)
    assert not Pair.objects.filter(campaign=campaign, judgement_count__gt=1).exists()
    judged = Judgement.objects.filter(pair__campaign=campaign)
    assert judged.values("pair").distinct().count() == judged.count()


def test_a_volunteer_at_a_human_pace_keeps_their_pair_while_others_wait() -> None:
    campaign = make_campaign(quota=3, judges_per_pair=1)
    for _ in range(3):
        make_pair(campaign)
    client = Client()
    person, _ = arrive(client, campaign.slug)
    assert person is not None
    answer(client, person, pair_page(client, person))
    html = pair_page(client, person)  # their second pair, served right after their answer
    mine = Assignment.objects.get(volunteer=person, answered_at__isnull=True).pair_id
    script_client = Client()
    script, _ = arrive(script_client, campaign.slug)
    assert script is not None
    pair_page(script_client, script)  # the last free pair, held by one who never answers
    # 90 seconds on the same pair: slow, but human. A newcomer takes the script's pair over,
    # not the person's; the next newcomer finds the campaign full.
    time_passes(campaign, 90)
    newcomer_client = Client()
    newcomer, page = arrive(newcomer_client, campaign.slug)
    assert newcomer is not None, page
    pair_page(newcomer_client, newcomer)
    assert Assignment.objects.get(volunteer=newcomer).pair_id not in (mine, None)
    assert arrive(Client(), campaign.slug)[0] is None
    answer(client, person, html)
    assert Judgement.objects.filter(volunteer=person, pair_id=mine).exists()  # stored, not reassigned


def test_a_volunteer_who_answered_before_loses_a_pair_left_open_past_the_pace_window() -> None:
    campaign = make_campaign(quota=2, judges_per_pair=1)
    for _ in range(2):
        make_pair(campaign)
    client = Client()
    person, _ = arrive(client, campaign.slug)
    assert person is not None
    answer(client, person, pair_page(client, person))
    html = pair_page(client, person)
    mine = Assignment.objects.get(volunteer=person, answered_at__isnull=True).pair_id
    time_passes(campaign, 110)  # inside the pace window: still theirs
    assert arrive(Client(), campaign.slug)[0] is None
    time_passes(campaign, 20)  # 130 s since their last answer: idle
    late_client = Client()
    late, page = arrive(late_client, campaign.slug)
    assert late is not None, page
    pair_page(late_client, late)
    assert Assignment.objects.get(volunteer=late).pair_id == mine
    # The person's late answer is not stored over the new holder's reservation.
    answer(client, person, html)
    assert not Judgement.objects.filter(volunteer=person, pair_id=mine).exists()
    answer(late_client, late, pair_page(late_client, late))
    assert Judgement.objects.filter(volunteer=late, pair_id=mine).exists()
