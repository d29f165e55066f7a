"""Full campaigns and platform sessions, over HTTP."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotate import allocation
from annotate.labels import Label
from annotate.models import Campaign, Volunteer
from tests.builders import make_campaign, make_judgement, make_pair, make_training_pairs, make_volunteer
from tests.test_campaign_platform import CODE, answer_everything, link, prolific_campaign, start

pytestmark = pytest.mark.django_db


def judged_to_target(campaign: Campaign) -> None:
    """Every campaign pair gets its judges (from earlier volunteers)."""
    for pair in campaign.pairs.filter(is_training=False, is_check=False):
        for _ in range(campaign.judges_per_pair):
            make_judgement(pair, make_volunteer(campaign))
        pair.judgement_count = campaign.judges_per_pair
        pair.save(update_fields=["judgement_count"])


def test_a_campaign_whose_pairs_all_have_their_judges_says_full_before_the_training() -> None:
    campaign = prolific_campaign(judges_per_pair=1)
    judged_to_target(campaign)
    before = Volunteer.objects.count()
    page = Client().get(link(pid="late-comer"))
    text = page.content.decode()
    assert page.status_code == 200
    assert "<h1>This study is full</h1>" in text
    assert "no completion code can be given: please return the study on Prolific" in text
    assert "pairs</strong> to judge" not in text and 'name="consent"' not in text  # no start form, no promise
    # A start posted anyway creates nobody.
    response = Client().post(
        "/c/prolific-study/", {"consent": "on", "english_level": "good", "PROLIFIC_PID": "late-comer"}
    )
    assert "This study is full" in response.content.decode()
    assert Volunteer.objects.count() == before


def test_a_campaign_whose_free_pairs_are_all_reserved_is_full_too() -> None:
    campaign = make_campaign(slug="tiny", quota=5, judges_per_pair=1)
    pair = make_pair(campaign)
    holder = make_volunteer(campaign)
    make_judgement(make_pair(campaign), holder)  # the holder has answered before: their reservation holds
    allocation.Pair.objects.filter(campaign=campaign).exclude(pk=pair.pk).update(judgement_count=1)
    assert allocation.next_assignment(holder).assignment.pair_id == pair.pk
    found = allocation.places(campaign)
    assert (found.needed, found.free, found.held, found.is_full) == (1, 0, 1, True)
    assert "This study is full" in Client().get("/c/tiny/").content.decode()


def test_a_participant_who_gets_no_pair_gets_no_completion_code() -> None:
    # The campaign fills up while the participant does the training: 0 pairs judged, no code.
    campaign = prolific_campaign(judges_per_pair=1)
    client = Client()
    volunteer, _ = start(client, link())
    judged_to_target(campaign)
    end = answer_everything(client, volunteer, check_answer=Label.SAME_MEANING)[-1]
    assert CODE not in end
    assert 'data-completion="full"' in end
    assert "The study filled up before a pair could be given to you" in end
    volunteer.refresh_from_db()
    assert (volunteer.completion_kind, volunteer.completion_code_shown) == ("full", "")


def test_staff_see_full_and_the_places_that_remain(admin_client: Client) -> None:
    campaign = prolific_campaign(judges_per_pair=2)  # 6 pairs x 2 judges = 12 places
    pairs = list(campaign.pairs.filter(is_training=False, is_check=False))
    make_judgement(pairs[0], make_volunteer(campaign))
    pairs[0].judgement_count = 1
    pairs[0].save(update_fields=["judgement_count"])
    page = admin_client.get("/staff/campaigns/prolific-study/volunteers/").content.decode()
    expected = '<strong data-count="places-free">11</strong> judgements free now, 0 held by volunteers at work,'
    assert expected + " 11 still needed in all" in page
    assert 'data-full="no"' in page
    home = admin_client.get("/").content.decode()
    assert "<strong data-full>full</strong>" not in home
    judged_to_target(campaign)
    page = admin_client.get("/staff/campaigns/prolific-study/volunteers/").content.decode()
    assert 'data-full="yes"' in page and "<strong>Full:</strong> a new volunteer would get no pair" in page
    assert "<strong data-full>full</strong>" in admin_client.get("/").content.decode()


def test_a_campaign_that_closes_itself_when_full() -> None:
    campaign = prolific_campaign(judges_per_pair=1, close_when_full=True)
    Client().get(link(pid="early"))
    campaign.refresh_from_db()
    assert campaign.is_open
    judged_to_target(campaign)
    page = Client().get(link(pid="late")).content.decode()
    campaign.refresh_from_db()
    assert not campaign.is_open
    assert "This study is full" in page
    assert "This campaign is closed" in Client().get(link(pid="later")).content.decode()


def test_a_campaign_that_does_not_close_itself_stays_open_when_full() -> None:
    campaign = prolific_campaign(judges_per_pair=1)
    judged_to_target(campaign)
    Client().get(link(pid="late"))
    campaign.refresh_from_db()
    assert campaign.is_open


def test_the_participant_id_alone_does_not_resume_on_another_device() -> None:
    prolific_campaign()
    volunteer, _ = start(Client(), link())
    for other_session in ("sess-10", ""):
        response = Client().get(link(session=other_session))
        text = response.content.decode()
        assert response.status_code == 403
        assert volunteer.token not in text
        assert "This participant ID started the study in another Prolific session" in text
    # Posting the start form with the participant id and another session is refused too.
    response = Client().post(
        "/c/prolific-study/",
        {"consent": "on", "english_level": "good", "PROLIFIC_PID": volunteer.participant_id, "SESSION_ID": "x"},
    )
    assert response.status_code == 403 and volunteer.token not in response.content.decode()
    # The same session (the platform's own link, opened again) resumes.
    assert Client().get(link()).url == f"/v/{volunteer.token}/"
    assert Volunteer.objects.count() == 1


def test_the_session_refusal_is_in_french_for_a_french_campaign() -> None:
    prolific_campaign(language="fr")
    start(Client(), link())
    text = Client().get(link(session="other")).content.decode()
    assert "Cet identifiant de participant" in text


def test_training_volunteers_are_not_counted_as_holding_places() -> None:
    campaign = make_campaign(slug="with-training", quota=2)
    make_training_pairs(campaign, 2)
    make_pair(campaign)
    volunteer = make_volunteer(campaign)
    allocation.next_assignment(volunteer, now=timezone.now() - timedelta(minutes=1))  # a training pair
    assert allocation.places(campaign).free == 1


def test_the_full_page_is_in_french_for_a_french_campaign() -> None:
    campaign = prolific_campaign(language="fr")
    judged_to_target(campaign)
    text = Client().get(link(pid="late")).content.decode()
    assert "<h1>Cette étude est complète</h1>" in text
    assert "veuillez rendre l'étude sur Prolific" in text


def test_the_welcome_pages_cheap_check_agrees_with_the_staff_count() -> None:
    campaign = make_campaign(slug="agree", quota=5, judges_per_pair=2)
    pairs = [make_pair(campaign) for _ in range(3)]
    now = timezone.now()
    states = []
    for pair in pairs:
        for _ in range(2):
            found, counted = allocation.openness(campaign, now=now), allocation.places(campaign, now=now)
            states.append((found.is_full, counted.is_full, found.complete, counted.is_complete))
            make_judgement(pair, make_volunteer(campaign))
            pair.judgement_count += 1
            pair.save(update_fields=["judgement_count"])
    found, counted = allocation.openness(campaign, now=now), allocation.places(campaign, now=now)
    states.append((found.is_full, counted.is_full, found.complete, counted.is_complete))
    assert all(state[0] == state[1] and state[2] == state[3] for state in states), states
    assert states[0] == (False, False, False, False) and states[-1] == (True, True, True, True)
