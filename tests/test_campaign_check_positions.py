"""Check pairs cannot be told apart by their place or their text."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command

from annotate import allocation, flow
from annotate.labels import Label
from annotate.models import Campaign, Volunteer
from tests.builders import make_campaign, make_pair, make_volunteer

pytestmark = pytest.mark.django_db


def places_of_checks(campaign: Campaign, volunteer: Volunteer) -> list[int]:
    """Walk the volunteer's pairs; the places (1 = first campaign item) where checks came."""
    places = []
    for place in range(1, 100):
        assignment = allocation.next_assignment(volunteer).assignment
        if assignment is None:
            return places
        if assignment.pair.is_check:
            places.append(place)
        flow.record_answer(volunteer, assignment.pair_id, Label.MOSTLY_SIMILAR.value)
    raise AssertionError("never finished")


def test_each_volunteer_meets_the_checks_at_places_of_their_own_within_the_spacing() -> None:
    # Before: every volunteer met the checks at the same places (6 and 10 in the report of the attack).
    campaign = make_campaign(quota=10, judges_per_pair=40, check_positions="5, 10")
    for number in range(2):
        make_pair(campaign, is_check=True, expected_label=Label.MOSTLY_SIMILAR.value, external_id=f"check-{number}")
    for _ in range(10):
        make_pair(campaign)
    seen: Counter[tuple[int, ...]] = Counter()
    # Tokens fixed by the test (a random one would make the spread of places a matter of luck).
    for number in range(30):
        places = places_of_checks(campaign, make_volunteer(campaign, token=f"volunteer-token-{number:02d}"))
        assert len(places) == 2  # the number of checks is as configured
        first, second = places
        assert 1 <= first <= 5 and 6 <= second <= 10  # within the configured spacing
        seen[(first, second)] += 1
    # Thirty volunteers, 25 possible placements: the places vary (a fixed place would give 1).
    assert len(seen) >= 10, seen
    assert len({first for first, _ in seen}) == 5 and len({second for _, second in seen}) == 5


def test_the_draw_is_stable_for_one_volunteer() -> None:
    campaign = make_campaign(quota=20, check_every=4)
    slots = allocation.volunteer_check_slots(campaign, 20, "token-a")
    assert slots == allocation.volunteer_check_slots(campaign, 20, "token-a")
    # Four checks reached by a volunteer judging 20 pairs (the fifth would come after the last pair).
    assert len(slots) == 4 and all(5 * (i - 1) < slot <= 5 * i for i, slot in enumerate(slots, start=1))


def test_the_import_warns_about_a_check_whose_sentences_are_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_campaign(slug="checked")
    path = tmp_path / "pairs.csv"
    path.write_text(
        "source,hypothesis,is_check,expected_label\n"
        "The cat sleeps.,A cat is asleep.,,\n"
        "The dog runs.,The  dog runs.,yes,same_meaning\n"
        "The sun is hot.,The sun is warm.,yes,mostly_similar\n",
        encoding="utf-8",
    )
    call_command("import_pairs", str(path), campaign="checked")
    out = capsys.readouterr().out
    assert (
        "note: warning: 1 check pair (line 3) shows two identical sentences: nothing is highlighted on such a pair, "
        "so volunteers can tell it is a check (change a few words; see the how-to on attention checks)"
    ) in out


def test_the_pair_page_names_the_pair_by_the_volunteers_item_number_not_its_id() -> None:
    # Check pairs imported after the real ones have ids after theirs: an id on the page would
    # tell them apart. The page names every pair by its place in the volunteer's sequence.
    from django.test import Client

    from tests.pair_page import item_on_page

    campaign = make_campaign(slug="ids", quota=3, check_positions="2")
    # Ids of several digits, like a real campaign's: a fresh database's 1-4 would also match the
    # page's progress figures (value="1"), and the test could not tell an id from a count.
    real = [make_pair(campaign, pk=70_001 + i) for i in range(3)]
    check = make_pair(campaign, pk=90_001, is_check=True, expected_label=Label.SAME_MEANING.value)
    volunteer = make_volunteer(campaign)
    client = Client()
    items = []
    for _ in range(4):
        page = client.get(f"/v/{volunteer.token}/").content.decode()
        item = item_on_page(page)
        items.append(item)
        for pair in (*real, check):
            assert f'value="{pair.pk}"' not in page or pair.pk == item
            assert f'data-pair="{pair.pk}"' not in page
        response = client.post(f"/v/{volunteer.token}/answer/", {"pair": item, "label": "same_meaning"})
        assert response.status_code == 302
    assert items == [1, 2, 3, 4]
    assert volunteer.judgements.count() == 4 and volunteer.judgements.filter(pair=check).count() == 1
    # An item number that is not one of the volunteer's is a 404, and nothing is stored.
    assert client.post(f"/v/{volunteer.token}/answer/", {"pair": 99, "label": "same_meaning"}).status_code == 404
    assert volunteer.judgements.count() == 4
