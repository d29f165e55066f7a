"""/api/judgements/: read-only, volunteers as pseudonyms, filters, bounded queries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.labels import Label
from annotate.models import Judgement
from annotate.pseudonyms import volunteer_pseudonym
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_judgement, make_pair, make_training_pairs, make_volunteer

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    return make_campaign(slug="api-judgements")


def test_list_shows_pseudonyms_never_tokens(staff_api, campaign):
    pair = make_pair(campaign, external_id="j1")
    volunteer = make_volunteer(campaign, english_level="advanced")
    shown = timezone.now() - timedelta(seconds=30)
    judgement = make_judgement(
        pair,
        volunteer,
        Label.DONT_KNOW,
        source_on_top=False,
        position=7,
        shown_at=shown,
        answered_at=shown + timedelta(seconds=4),
    )

    response = staff_api.get("/api/judgements/")

    assert response.status_code == 200
    (row,) = response.json()["results"]
    assert row == {
        "id": judgement.pk,
        "campaign": "api-judgements",
        "pair": pair.pk,
        "pair_external_id": "j1",
        "volunteer": volunteer_pseudonym(volunteer.token),
        "english_level": "advanced",
        "label": "dont_know",
        "binary_label": None,
        "top_sentence": "hypothesis",
        "position": 7,
        "is_training": False,
        "is_check": False,
        "excluded": False,
        "exclusion_reason": "",
        "shown_at": row["shown_at"],
        "answered_at": row["answered_at"],
        "response_seconds": 4.0,
    }
    assert volunteer.token not in response.content.decode()
    assert staff_api.get(f"/api/judgements/{judgement.pk}/").json() == row


def test_filters(staff_api, campaign):
    training = make_training_pairs(campaign, 1)[0]
    alice, bob = make_volunteer(campaign), make_volunteer(campaign)
    first, second = make_pair(campaign), make_pair(campaign)
    a1 = make_judgement(first, alice, Label.SAME_MEANING)
    a2 = make_judgement(second, alice, Label.VERY_DIFFERENT)
    b1 = make_judgement(first, bob, Label.SAME_MEANING)
    bt = make_judgement(training, bob, Label.DONT_KNOW)
    other = make_judgement(make_pair(make_campaign()), label=Label.SAME_MEANING)

    def ids(query):
        response = staff_api.get(f"/api/judgements/?{query}")
        assert response.status_code == 200, response.json()
        return [row["id"] for row in response.json()["results"]]

    assert ids("") == [a1.pk, a2.pk, b1.pk, bt.pk, other.pk]
    assert ids("campaign=api-judgements") == [a1.pk, a2.pk, b1.pk, bt.pk]
    assert ids("campaign=api-judgements&is_training=false") == [a1.pk, a2.pk, b1.pk]
    assert ids("is_training=true") == [bt.pk]
    assert ids(f"volunteer={volunteer_pseudonym(alice.token)}") == [a1.pk, a2.pk]
    assert ids(f"campaign=api-judgements&volunteer={volunteer_pseudonym(bob.token)}") == [b1.pk, bt.pk]
    assert ids(f"volunteer={alice.token}") == []  # the token itself is not a way in
    assert ids(f"pair={first.pk}") == [a1.pk, b1.pk]
    assert ids("label=same_meaning&campaign=api-judgements") == [a1.pk, b1.pk]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("campaign=nope", "campaign"),
        ("label=yes", "label"),
        ("is_training=sometimes", "is_training"),
        ("pair=x", "pair"),
    ],
)
def test_bad_filters_are_named(staff_api, query, field):
    response = staff_api.get(f"/api/judgements/?{query}")
    # An unknown campaign is a 404 (the query names what does not exist); bad values are 400.
    assert response.status_code == (404 if field == "campaign" else 400)
    assert list(response.json()) == [field]


def test_list_query_count_is_bounded(staff_api, campaign, django_assert_max_num_queries):
    volunteers = [make_volunteer(campaign) for _ in range(10)]
    for n in range(60):
        make_judgement(make_pair(campaign), volunteers[n % 10])
    # auth token, the campaign filter, count, page, and the exclusion verdicts of the page's
    # campaign (two judgement scans and its volunteers)
    with django_assert_max_num_queries(7):
        response = staff_api.get("/api/judgements/?campaign=api-judgements")
    assert response.json()["count"] == 60
    with django_assert_max_num_queries(8):  # ... and the campaign's volunteers for the pseudonym
        response = staff_api.get(
            f"/api/judgements/?campaign=api-judgements&volunteer={volunteer_pseudonym(volunteers[3].token)}"
        )
    assert response.json()["count"] == 6


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_judgements_are_never_written(staff_api, campaign, method):
    judgement = make_judgement(make_pair(campaign))
    url = "/api/judgements/" if method == "post" else f"/api/judgements/{judgement.pk}/"
    payload = {"pair": judgement.pair_id, "label": "very_different"}
    response = getattr(staff_api, method)(url, payload, format="json")
    assert response.status_code == 405
    judgement.refresh_from_db()
    assert judgement.label == Label.SAME_MEANING.value
    assert Judgement.objects.count() == 1
