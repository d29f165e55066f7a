"""Staff pages whose cost is that of the page they show: statement counts that do not grow with
the campaign, the volunteers table in pages, and the quality and pair verdicts kept under the
change stamp (reused by the next view, dropped when a judgement arrives)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import cache, caches
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotate import quality
from annotate.models import Campaign, Judgement, Pair
from annotate.pseudonyms import volunteer_pseudonym
from scoring.models import MetricConfig
from staff.views import volunteers as volunteers_view
from tests.builders import (
    make_campaign,
    make_judgement,
    make_metric_config,
    make_pair,
    make_score,
    make_staff,
    make_volunteer,
)
from tests.export_support import export_text, read_csv

pytestmark = pytest.mark.django_db

LABELS = ("same_meaning", "very_different", "mostly_similar")


@pytest.fixture
def staff_client() -> Client:
    user = make_staff("counter", "x", superuser=True)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    cache.clear()


def forget() -> None:
    """Empty the page caches and the kept analyses (a first view after a change pays both)."""
    cache.clear()
    caches["analyses"].clear()


def build(slug: str, pairs: int, volunteers: int, configs: list[MetricConfig]) -> tuple[Campaign, Pair]:
    """A campaign of ``pairs`` pairs (two origins, two systems), ``volunteers`` volunteers who
    each judge every pair, and a score of every configuration on every pair."""
    campaign = make_campaign(slug=slug, exclude_failed_checks=None)
    made = [
        make_pair(campaign, external_id=f"{slug}-{n}", origin=f"corpus{n % 2}", system=f"s{n % 2}")
        for n in range(pairs)
    ]
    for v in range(volunteers):
        volunteer = make_volunteer(campaign, exclusion_override="exclude" if v == 0 else "")
        for n, pair in enumerate(made):
            make_judgement(pair=pair, volunteer=volunteer, label=LABELS[(n + v) % len(LABELS)])
    for config in configs:
        for n, pair in enumerate(made):
            make_score(pair, config, n / pairs)
    return campaign, made[0]


def pages(campaign: Campaign, pair: Pair, config: MetricConfig) -> dict[str, str]:
    slug = campaign.slug
    return {
        "progress": f"/staff/campaigns/{slug}/settings/",
        "volunteers": f"/staff/campaigns/{slug}/volunteers/",
        "pair list": f"/staff/campaigns/{slug}/pairs/",
        "pair list with a metric": f"/staff/campaigns/{slug}/pairs/?metric={config.pk}",
        "one pair": f"/staff/campaigns/{slug}/pairs/{pair.pk}/",
        "status": "/staff/status/",
        "home": "/staff/",
        "dashboard data": f"/staff/dashboard/data/?campaign={slug}",
        "export start": f"/staff/export/{slug}/?level=pairs&format=csv",
    }


def statements(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
        if response.streaming:  # an export: its first chunk, as a download starts
            next(iter(response.streaming_content), b"")
    assert response.status_code == 200, url
    return len(captured.captured_queries)


def test_no_staff_page_runs_more_statements_for_a_larger_campaign(staff_client: Client) -> None:
    configs = [make_metric_config("lev", label="lev"), make_metric_config("bleu", label="bleu")]
    small, small_pair = build("small", pairs=3, volunteers=2, configs=configs)
    large, large_pair = build("large", pairs=24, volunteers=7, configs=configs)
    for (name, small_url), large_url in zip(
        pages(small, small_pair, configs[0]).items(), pages(large, large_pair, configs[0]).values(), strict=True
    ):
        forget()
        cold = (statements(staff_client, small_url), statements(staff_client, large_url))
        warm = (statements(staff_client, small_url), statements(staff_client, large_url))
        forget()
        cold_large_first = statements(staff_client, large_url)
        # The status page keeps one set of counts for every campaign: the small campaign's
        # view leaves them kept for the large one's.
        assert cold[0] == cold_large_first, f"{name}: {cold[0]} then {cold_large_first} statements"
        assert cold[1] == (warm[1] if name == "status" else cold[0]), f"{name}: {cold} statements"
        assert warm[0] == warm[1], f"{name}: {warm} statements once kept"


def test_the_volunteers_table_comes_in_pages(staff_client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(volunteers_view, "PAGE_SIZE", 2)
    campaign = make_campaign(slug="paged", exclude_failed_checks=None)
    pair = make_pair(campaign)
    people = [make_volunteer(campaign, exclusion_override="exclude" if n == 3 else "") for n in range(5)]
    for volunteer in people:
        make_judgement(pair=pair, volunteer=volunteer)
    page = staff_client.get("/staff/campaigns/paged/volunteers/?page=2").content.decode()
    # Excluded by staff is not flagged by the rule: the order is the volunteers' own.
    shown = [volunteer for volunteer in people if f"<code>{volunteer_pseudonym(volunteer.token)}</code>" in page]
    assert shown == people[2:4]
    assert "Volunteers 3\u20134 of 5, page 2 of 3." in page
    assert '<a href="?page=1" id="previous-page">Previous</a>' in page
    assert '<a href="?page=3" id="next-page">Next</a>' in page
    # The summary counts every volunteer, not the page's.
    assert '<dd data-count="started">5</dd>' in page
    assert '<dd data-count="excluded">1</dd>' in page
    last = staff_client.get("/staff/campaigns/paged/volunteers/?page=3").content.decode()
    assert [v for v in people if volunteer_pseudonym(v.token) in last] == people[4:]
    assert 'id="next-page"' not in last
    # A page that does not exist shows the last one; a word shows the first.
    assert (
        volunteer_pseudonym(people[4].token)
        in staff_client.get("/staff/campaigns/paged/volunteers/?page=99").content.decode()
    )
    assert (
        volunteer_pseudonym(people[0].token)
        in staff_client.get("/staff/campaigns/paged/volunteers/?page=abc").content.decode()
    )


def test_flagged_volunteers_lead_the_first_page(staff_client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(volunteers_view, "PAGE_SIZE", 2)
    campaign = make_campaign(slug="flags", exclude_failed_checks=None, exclude_same_answer_share=0.9)
    pairs = [make_pair(campaign) for _ in range(6)]
    people = [make_volunteer(campaign) for _ in range(4)]
    for n, volunteer in enumerate(people):
        for m, pair in enumerate(pairs):
            # The last volunteer gives one answer for everything: the rule flags them.
            make_judgement(pair=pair, volunteer=volunteer, label=LABELS[0] if n == 3 else LABELS[m % 3])
    first = staff_client.get("/staff/campaigns/flags/volunteers/").content.decode()
    assert [v for v in people if volunteer_pseudonym(v.token) in first] == [people[0], people[3]]
    assert first.index(volunteer_pseudonym(people[3].token)) < first.index(volunteer_pseudonym(people[0].token))


def spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record every campaign-wide quality pass (the campaign's id)."""
    calls: list[int] = []
    real: Callable[..., Any] = quality.campaign_quality

    def counted(campaign: Campaign) -> Any:
        calls.append(campaign.pk)
        return real(campaign)

    # Wherever it is called from: through the kept verdicts or straight from annotate.quality.
    monkeypatch.setattr("scoring.reports.verdicts.campaign_quality", counted)
    monkeypatch.setattr("annotate.quality.campaign_quality", counted)
    return calls


def test_the_quality_pass_is_kept_until_a_judgement_arrives(
    staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_metric_config("lev", label="lev")
    campaign, pair = build("kept", pairs=4, volunteers=3, configs=[config])
    calls = spy(monkeypatch)
    urls = [
        "/staff/campaigns/kept/volunteers/",
        f"/staff/campaigns/kept/pairs/{pair.pk}/",
        f"/staff/campaigns/kept/pairs/{pair.pk + 1}/",
        f"/staff/campaigns/kept/pairs/?metric={config.pk}",
    ]
    for url in urls:
        assert staff_client.get(url).status_code == 200
    assert calls == [campaign.pk]  # once for the four views
    page = staff_client.get("/staff/campaigns/kept/volunteers/").content.decode()
    assert '<dd data-count="started">3</dd>' in page
    # A new volunteer's judgement changes the stamp: the next view sees them.
    newcomer = make_volunteer(campaign)
    make_judgement(pair=pair, volunteer=newcomer)
    page = staff_client.get("/staff/campaigns/kept/volunteers/").content.decode()
    assert calls == [campaign.pk, campaign.pk]
    assert '<dd data-count="started">4</dd>' in page
    assert f"<code>{volunteer_pseudonym(newcomer.token)}</code>" in page


def test_a_judgement_changes_the_kept_pair_verdicts(staff_client: Client) -> None:
    config = make_metric_config("lev", label="lev[chars]")
    campaign = make_campaign(slug="verdicts", exclude_failed_checks=None)
    near, far = make_pair(campaign, external_id="near"), make_pair(campaign, external_id="far")
    make_score(near, config, 0.1)  # a distance: small is close
    make_score(far, config, 0.9)
    make_judgement(pair=near, label="very_different")
    url = f"/staff/campaigns/verdicts/pairs/?metric={config.pk}"

    def rows() -> list[tuple[str, str]]:
        worst = staff_client.get(url).content.decode().split('id="worst"')[1]
        found = []
        for pair in (near, far):
            marker = f'<tr data-pair="{pair.pk}">'
            if marker in worst:
                found.append(
                    (pair.external_id, worst.split(marker)[1].split('data-label="Volunteers:">')[1].split("<")[0])
                )
        return found

    # The closest pair judged "very different": the worst disagreement; "far" has no verdict.
    assert rows() == [("near", "not paraphrase")]
    # Two more judgements make "near" a paraphrase, and "far" gets a verdict: the list follows.
    make_judgement(pair=near, label="same_meaning")
    make_judgement(pair=near, label="same_meaning")
    make_judgement(pair=far, label="same_meaning")
    assert sorted(rows()) == [("far", "paraphrase"), ("near", "paraphrase")]


def test_a_staff_override_shows_at_once_on_the_kept_verdicts(staff_client: Client) -> None:
    campaign = make_campaign(slug="override", exclude_failed_checks=None)
    pair = make_pair(campaign)
    volunteer = make_volunteer(campaign)
    make_judgement(pair=pair, volunteer=volunteer)
    assert (
        '<dd data-count="excluded">0</dd>' in staff_client.get("/staff/campaigns/override/volunteers/").content.decode()
    )
    response = staff_client.post(
        "/staff/campaigns/override/volunteers/", {"volunteer": volunteer.pk, "override": "exclude", "note": "bot"}
    )
    assert response.status_code == 302
    page = staff_client.get("/staff/campaigns/override/volunteers/").content.decode()
    assert '<dd data-count="excluded">1</dd>' in page
    assert "<strong>excluded</strong>: excluded by staff: bot" in page
    one = staff_client.get(f"/staff/campaigns/override/pairs/{pair.pk}/").content.decode()
    assert '<td data-label="Excluded:">excluded</td>' in one


def download(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return b"".join(response.streaming_content).decode("utf-8")  # type: ignore[attr-defined]


def test_the_export_makes_no_campaign_wide_quality_pass(staff_client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """Who is excluded comes from each chunk's judges' own judgements, never from a pass over
    every judgement of the campaign; the rows are those the full quality pass gives."""
    campaign, pair = build("exports", pairs=4, volunteers=3, configs=[make_metric_config("lev", label="lev")])
    calls = spy(monkeypatch)
    downloads = {
        ("pairs", "csv"): download(staff_client, "/staff/export/exports/?level=pairs&format=csv"),
        ("judgements", "jsonl"): download(staff_client, "/staff/export/exports/?level=judgements&format=jsonl"),
        ("judgements", "csv"): download(staff_client, "/api/campaigns/exports/export/?level=judgements"),
    }
    assert calls == []
    full = quality.campaign_quality(campaign)
    for (level, extension), body in downloads.items():
        assert body == export_text(campaign, level, extension, verdicts=full), (level, extension)
    # The first volunteer is excluded by staff: one answer of theirs left out of every pair.
    _, rows = read_csv(downloads["pairs", "csv"])
    assert [row["excluded_judgements"] for row in rows] == ["1"] * 4
    # A new judgement shows in the next download, still without a pass.
    calls.clear()  # the test's own pass above
    make_judgement(pair=pair, volunteer=make_volunteer(campaign), label=LABELS[0])
    body = download(staff_client, "/staff/export/exports/?level=pairs&format=csv")
    assert calls == []
    assert body == export_text(campaign, "pairs", "csv", verdicts=quality.campaign_quality(campaign))


def test_an_edited_answer_shows_in_the_next_export(staff_client: Client) -> None:
    """An edit adds no row (the change stamp stays): the campaign's change counter tells the kept
    verdicts, so the export does not name a volunteer excluded for answers they no longer gave."""
    campaign = make_campaign(slug="edited", exclude_failed_checks=None, exclude_same_answer_share=0.9)
    volunteer = make_volunteer(campaign)
    judgements = [make_judgement(pair=make_pair(campaign), volunteer=volunteer, label=LABELS[0]) for _ in range(6)]
    url = "/staff/export/edited/?level=judgements&format=csv"
    _, rows = read_csv(download(staff_client, url))
    assert {row["excluded"] for row in rows} == {"1"}  # one answer for all six pairs: flagged
    Judgement.objects.filter(pk=judgements[0].pk).update(label=LABELS[1])  # as the admin edits it
    body = download(staff_client, url)
    assert body == export_text(campaign, "judgements", "csv")
    _, rows = read_csv(body)
    assert {row["excluded"] for row in rows} == {"0"}
