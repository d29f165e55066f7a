"""The end page of a volunteer who was given no pair says what happened, in the campaign's
language: no thanks for answers they could not give."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotate.labels import Label
from annotate.models import Campaign
from tests.builders import make_campaign, make_pair, make_training_pairs
from tests.test_campaign_full_and_sessions import judged_to_target
from tests.test_campaign_platform import CODE, answer_everything, link, start

pytestmark = pytest.mark.django_db

NO_PAIR_EN = (
    "This study had no pair free for you: every pair already had all the answers it needs, or was being judged "
    "by other participants, so your session ended before a pair could be given to you. You have not judged any pair."
)
NO_PAIR_FR = (  # blocktranslate output is not escaped: the apostrophes stay as they are
    "Cette étude n'avait aucune paire libre pour vous : chaque paire avait déjà toutes les réponses "
    "nécessaires, ou était en cours de jugement par d'autres participants ; votre session s'est donc "
    "terminée avant qu'une paire puisse vous être donnée. Vous n'avez jugé aucune paire."
)


def article(page: str) -> str:
    return re.search(r'<article class="card narrow done">(.*?)</article>', page, re.S).group(1)


def filled_during_training(campaign: Campaign, client: Client, url: str) -> str:
    """Start, let the campaign fill up while the volunteer trains, and return the end page."""
    volunteer, _ = start(client, url)
    judged_to_target(campaign)
    return answer_everything(client, volunteer, check_answer=Label.SAME_MEANING)[-1]


def test_a_volunteer_given_no_pair_is_told_why_not_thanked_for_answers() -> None:
    campaign = make_campaign(slug="plain", quota=3, judges_per_pair=1)
    make_training_pairs(campaign, 1)
    for _ in range(3):
        make_pair(campaign)
    end = filled_during_training(campaign, Client(), "/c/plain/")
    text = article(end)
    assert "<h1>Nothing to judge this time</h1>" in text
    assert f'<p id="no-pair-given">{NO_PAIR_EN}</p>' in text
    assert "<p>Thank you for your time.</p>" in text
    assert "Your answers help us" not in text and "You judged" not in text and "✓" not in text
    assert "<title>Nothing to judge · " in end


def test_the_same_page_in_french() -> None:
    campaign = make_campaign(slug="etude", language="fr", quota=3, judges_per_pair=1)
    make_training_pairs(campaign, 1)
    for _ in range(3):
        make_pair(campaign)
    text = article(filled_during_training(campaign, Client(), "/c/etude/"))
    assert "<h1>Rien à juger cette fois</h1>" in text
    assert f'<p id="no-pair-given">{NO_PAIR_FR}</p>' in text
    assert "<p>Merci de votre temps.</p>" in text
    assert "Vos réponses nous aident" not in text


def test_a_prolific_participant_given_no_pair_reads_why_and_to_return_the_study() -> None:
    # No check pair: a check answered before the end would be a pair judged.
    campaign = make_campaign(
        slug="prolific-study", quota=3, judges_per_pair=1, platform="prolific", completion_code=CODE
    )
    make_training_pairs(campaign, 1)
    for _ in range(3):
        make_pair(campaign)
    text = article(filled_during_training(campaign, Client(), link()))
    assert f'<p id="no-pair-given">{NO_PAIR_EN}</p>' in text
    assert "The study filled up before a pair could be given to you" in text
    assert "Your answers help us" not in text and CODE not in text


def test_a_volunteer_who_judged_pairs_is_still_thanked_for_them() -> None:
    campaign = make_campaign(slug="plain", quota=2, judges_per_pair=1)
    for _ in range(2):
        make_pair(campaign)
    client = Client()
    volunteer, _ = start(client, "/c/plain/")
    text = article(answer_everything(client, volunteer, check_answer=Label.SAME_MEANING)[-1])
    assert "<h1>Thank you!</h1>" in text and "You judged <strong>2 pairs</strong>." in text
    assert "no-pair-given" not in text
