"""The pair page names its pair by the volunteer's item number, not by the pair's id: helpers."""

from __future__ import annotations

import re

from annotate.models import Assignment, Pair, Volunteer

ITEM_INPUT = re.compile(r'name="pair" value="(\d+)"')
# An item number no volunteer reaches: posting it is answering a pair that is not yours.
NOT_AN_ITEM = 10**6


def item_on_page(html: str) -> int:
    match = ITEM_INPUT.search(html)
    assert match, "the pair page has no pair input"
    return int(match.group(1))


def pair_id_on_page(html: str, volunteer: Volunteer) -> int:
    """The id of the pair the page shows to ``volunteer``."""
    return Assignment.objects.filter(volunteer=volunteer, position=item_on_page(html)).latest("id").pair_id


def pair_on_page(html: str, volunteer: Volunteer) -> Pair:
    return Pair.objects.get(pk=pair_id_on_page(html, volunteer))


def item_of(volunteer: Volunteer, pair_id: int) -> int:
    """What the volunteer's page posts for that pair (``NOT_AN_ITEM`` if it was never theirs)."""
    position = (
        Assignment.objects.filter(volunteer=volunteer, pair_id=pair_id).values_list("position", flat=True).first()
    )
    return position or NOT_AN_ITEM
