"""The staff page of a pair (sentences, every judgement, every score, gold) and a campaign's
searchable list of pairs."""

from __future__ import annotations

import datetime

import pytest
from django.test import Client

from annotate.models import Judgement
from annotate.pseudonyms import volunteer_pseudonym
from tests.builders import (
    make_campaign,
    make_judgement,
    make_metric_config,
    make_pair,
    make_score,
    make_staff,
    make_volunteer,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client() -> Client:
    user = make_staff("inspector", "x", superuser=True)
    client = Client()
    client.force_login(user)
    return client


def test_the_pair_page_shows_every_judgement_score_and_the_gold(staff_client: Client) -> None:
    campaign = make_campaign(slug="look", exclude_failed_checks=None)
    pair = make_pair(campaign, external_id="x1", source="The cat sat.", hypothesis="The dog sat.", gold_label=True)
    kept, flagged = make_volunteer(campaign), make_volunteer(campaign, exclusion_override="exclude")
    for volunteer, label, seconds, position in [(kept, "same_meaning", 4.5, 7), (flagged, "very_different", 12.0, 3)]:
        judgement = make_judgement(pair=pair, volunteer=volunteer, label=label)
        Judgement.objects.filter(pk=judgement.pk).update(
            shown_at=judgement.answered_at - datetime.timedelta(seconds=seconds), position=position
        )
    make_score(pair, make_metric_config("lev", label="lev[words]"), 0.25)
    page = staff_client.get(f"/staff/campaigns/look/pairs/{pair.pk}/").content.decode()
    assert '<mark class="diff">cat</mark>' in page and '<mark class="diff">dog</mark>' in page
    assert '<dd data-fact="gold">paraphrase</dd>' in page
    assert "2 judgements" in page
    for volunteer, seconds, position, excluded in [(kept, "4.5", "7", "no"), (flagged, "12.0", "3", "excluded")]:
        assert f"<code>{volunteer_pseudonym(volunteer.token)}</code>" in page
        assert f'<td class="num" data-label="Time taken:">{seconds} s</td>' in page
        assert f'<td class="num" data-label="Position:">{position}</td>' in page
        assert f'<td data-label="Excluded:">{excluded}</td>' in page
    assert '<th scope="row"><code>lev[words]</code></th><td class="num" data-label="Score:">0.2500</td>' in page
    assert volunteer.token not in page
    assert staff_client.get(f"/staff/campaigns/other/pairs/{pair.pk}/").status_code == 404
    # The admin's "View on site" leads here.
    response = staff_client.get(f"/admin/annotate/pair/{pair.pk}/change/")
    assert f'href="/staff/campaigns/look/pairs/{pair.pk}/"' in response.content.decode()


def test_the_pair_list_searches_text_origin_and_system(staff_client: Client) -> None:
    campaign = make_campaign(slug="many")
    agreed = make_pair(
        campaign, external_id="a", source="Cats purr.", hypothesis="Cats hum.", origin="mrpc", system="s1"
    )
    make_pair(campaign, external_id="b", source="Dogs bark.", hypothesis="Dogs yap.", origin="paws", system="s2")
    for label in ("same_meaning", "same_meaning", "very_different"):
        make_judgement(pair=agreed, volunteer=make_volunteer(campaign), label=label)
    page = staff_client.get("/staff/campaigns/many/pairs/?q=purr").content.decode()
    assert "1 pair." in page
    assert f'<a href="/staff/campaigns/many/pairs/{agreed.pk}/">a</a>' in page
    assert '<td class="num" data-label="Agreement:">67%</td>' in page
    assert "Dogs bark." not in page
    assert "Dogs bark." in staff_client.get("/staff/campaigns/many/pairs/?origin=paws").content.decode()
    assert "2 pairs." in staff_client.get("/staff/campaigns/many/pairs/").content.decode()
    assert "0 pairs." in staff_client.get("/staff/campaigns/many/pairs/?system=s1&origin=paws").content.decode()
    assert staff_client.get("/staff/campaigns/many/pairs/?page=abc").status_code == 200


def test_a_metrics_worst_disagreements_are_listed_with_links(staff_client: Client) -> None:
    from scoring.reports.pair_pages import worst_disagreements

    campaign = make_campaign(slug="worst")
    closer = make_metric_config("bleu", label="bleu")  # higher is closer
    distance = make_metric_config("lev", label="lev[words]")  # lower is closer
    assert closer.higher_is_closer and not distance.higher_is_closer
    # (score, volunteers' answers): BLEU places p4 (a paraphrase) farthest and p1 (not) closest.
    cases = {
        "p1": (0.9, ["very_different", "slightly_similar"]),
        "p2": (0.7, ["same_meaning", "same_meaning"]),
        "p3": (0.5, ["very_different", "very_different"]),
        "p4": (0.1, ["same_meaning", "mostly_similar"]),
        "p5": (0.3, ["dont_know"]),  # no verdict: left out
    }
    pairs = {}
    for name, (score, answers) in cases.items():
        pairs[name] = make_pair(campaign, external_id=name)
        make_score(pairs[name], closer, score)
        make_score(pairs[name], distance, score)  # the same numbers read as distances
        for answer in answers:
            make_judgement(pair=pairs[name], volunteer=make_volunteer(campaign), label=answer)
    # Closeness ranks among the 5 scored pairs under BLEU: 0.1 -> 0, 0.3 -> .25, 0.5 -> .5, 0.7 -> .75, 0.9 -> 1.
    assert [
        (row.external_id, row.volunteers, row.rank, row.disagreement)
        for row in worst_disagreements(campaign, closer.pk)
    ] == [
        ("p1", "not paraphrase", 1.0, 1.0),
        ("p4", "paraphrase", 0.0, 1.0),
        ("p3", "not paraphrase", 0.5, 0.5),
        ("p2", "paraphrase", 0.75, 0.25),
    ]
    # As distances the same numbers mean the opposite: 0.1 is the closest pair (rank 1), 0.9 the
    # farthest (rank 0). p4, a paraphrase at distance 0.1, agrees with the volunteers; p2, a
    # paraphrase at distance 0.7, is now the worst.
    assert [
        (row.external_id, row.volunteers, row.rank, row.disagreement)
        for row in worst_disagreements(campaign, distance.pk)
    ] == [
        ("p2", "paraphrase", 0.25, 0.75),
        ("p3", "not paraphrase", 0.5, 0.5),
        ("p1", "not paraphrase", 0.0, 0.0),
        ("p4", "paraphrase", 1.0, 0.0),
    ]
    page = staff_client.get(f"/staff/campaigns/worst/pairs/?metric={closer.pk}").content.decode()
    assert f'<a href="/staff/campaigns/worst/pairs/{pairs["p1"].pk}/">p1</a>' in page
    assert '<td class="num" data-label="Rank:">1.00</td>' in page
    assert "<title>Pairs of worst · ParaEval</title>" in page or "<title>Pairs of " in page.split("</title>")[0]
    assert "<section" not in page.split("</title>")[0]  # the title is text, not a page section
    assert staff_client.get("/staff/campaigns/worst/pairs/?metric=999999").status_code == 200


def test_the_dashboard_leads_to_the_pair_list(staff_client: Client) -> None:
    make_campaign(slug="dash", name="Dash")
    page = staff_client.get("/staff/dashboard/?campaign=dash").content.decode()
    assert '<a href="/staff/campaigns/dash/pairs/">pairs of Dash</a>' in page
