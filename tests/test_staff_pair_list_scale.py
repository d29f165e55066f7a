"""The staff pair list at scale: its menus read a step per origin and system, and a large
campaign's worst disagreements come from the ``interactive`` worker, kept and dated, computed as
the inline ones are. Exact values against independent computations; statement counts that do
not grow with the campaign."""

from __future__ import annotations

import base64
import datetime
import json
import random
import re
from pathlib import Path

import pytest
from django.core.cache import cache, caches
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.models import Campaign, Judgement, Pair
from scoring.models import MetricConfig
from scoring.reports import pair_pages, tasks
from tests.builders import (
    make_campaign,
    make_judgement,
    make_metric_config,
    make_pair,
    make_score,
    make_staff,
    make_volunteer,
)
from tests.workers_support import messages_in

pytestmark = pytest.mark.django_db

ANSWERS = ("very_different", "slightly_similar", "mostly_similar", "same_meaning", "dont_know")


@pytest.fixture
def staff_client() -> Client:
    client = Client()
    client.force_login(make_staff("lister", "x", superuser=True))
    return client


@pytest.fixture(autouse=True)
def _empty_caches() -> None:
    cache.clear()
    caches["analyses"].clear()


def test_the_menus_offer_the_campaigns_distinct_origins_and_systems(staff_client: Client) -> None:
    campaign = make_campaign(slug="menus")
    other = make_campaign(slug="elsewhere")
    # Duplicates, empty values, a prefix of another value, case and accents, spaces.
    origins = ["mrpc", "mrpc", "", "paws", "pawsx", "MRPC", "Été", "two words", "", "z"]
    systems = ["s1", "", "s1", "s10", "gpt 4", "s2", "", "S1", "ß", "s2"]
    pairs = [
        make_pair(campaign, external_id=f"m{n}", origin=origin, system=system)
        for n, (origin, system) in enumerate(zip(origins, systems, strict=True))
    ]
    make_pair(other, origin="only-elsewhere", system="other-system")
    found = pair_pages.distinct_values(campaign, "origin"), pair_pages.distinct_values(campaign, "system")
    assert found == (
        sorted({pair.origin for pair in pairs if pair.origin}),
        sorted({pair.system for pair in pairs if pair.system}),
    )
    assert found[0] == sorted(["mrpc", "paws", "pawsx", "MRPC", "Été", "two words", "z"])
    facets = pair_pages.facets(campaign)
    assert (facets.pairs, facets.origins, facets.systems) == (10, *found)
    page = staff_client.get("/staff/campaigns/menus/pairs/").content.decode()
    menu = page.split('id="id_origin">', 1)[1].split("</select>", 1)[0]
    assert re.findall(r"<option>([^<]*)</option>", menu) == ["MRPC", "mrpc", "paws", "pawsx", "two words", "z", "Été"]
    assert "only-elsewhere" not in page and "other-system" not in page
    with pytest.raises(ValueError):
        pair_pages.distinct_values(campaign, "source")


def test_menus_of_a_campaign_without_origins_are_empty() -> None:
    campaign = make_campaign(slug="bare")
    make_pair(campaign, origin="", system="")
    assert pair_pages.distinct_values(campaign, "origin") == []
    assert pair_pages.distinct_values(campaign, "system") == []


# --- the worst disagreements -------------------------------------------------------------------


def scored_campaign(slug: str, size: int, seed: int) -> tuple[Campaign, MetricConfig, MetricConfig]:
    """``size`` corpus pairs, scores from a few values (many ties), random answers; a training
    and a check pair, scored and judged (left out), a failed score, and another campaign's pairs."""
    rng = random.Random(seed)
    campaign = make_campaign(slug=slug, exclude_failed_checks=None)
    closer = make_metric_config("bleu", label=f"bleu-{slug}")
    distance = make_metric_config("lev", label=f"lev-{slug}")
    volunteers = [make_volunteer(campaign) for _ in range(4)]
    training = make_pair(campaign, is_training=True, training_position=1, expected_label="same_meaning")
    check = make_pair(campaign, is_check=True, expected_label="same_meaning")
    for special, flags in ((training, {"is_training": True}), (check, {"is_check": True})):
        make_score(special, closer, 0.0)
        make_score(special, distance, 9.0)
        make_judgement(special, volunteers[0], "very_different", **flags)
    for n in range(size):
        pair = make_pair(campaign, external_id=f"{slug}-{n}")
        if n == 3:
            make_score(pair, closer, None)  # failed: left out
        else:
            make_score(pair, closer, rng.choice([0.1, 0.25, 0.5, 0.5, 0.75, 0.9]))
        make_score(pair, distance, float(rng.randint(0, 4)))
        for volunteer in rng.sample(volunteers, rng.randint(0, 3)):
            make_judgement(pair, volunteer, rng.choice(ANSWERS))
    elsewhere = make_campaign(slug=f"{slug}-elsewhere")
    stranger = make_volunteer(elsewhere)
    for n in range(3):
        pair = make_pair(elsewhere)
        make_score(pair, closer, 0.01 * n)
        make_judgement(pair, stranger, "same_meaning")
    return campaign, closer, distance


def independent_worst(campaign: Campaign, config: MetricConfig, limit: int = 20) -> list[tuple[str, str, float, float]]:
    """The definition, written out: ranks by counting (ties share the mean rank) among the
    campaign's scored corpus pairs; the majority of the binary reading; worst first, then by id."""
    corpus = Pair.objects.filter(campaign=campaign, is_training=False, is_check=False)
    scores = {
        score.pair_id: score.value
        for pair in corpus
        for score in pair.scores.filter(metric_config=config, status="done")
    }
    values = list(scores.values())
    count = len(values)
    rows = []
    for pair in corpus.order_by("id"):
        if pair.pk not in scores:
            continue
        answers = [j.label for j in Judgement.objects.filter(pair=pair, is_training=False, is_check=False)]
        yes = sum(answer in ("mostly_similar", "same_meaning") for answer in answers)
        no = sum(answer in ("very_different", "slightly_similar") for answer in answers)
        if yes == no:
            continue
        value = scores[pair.pk]
        below = sum(other < value for other in values)
        equal = sum(other == value for other in values)
        ascending = (below + (equal - 1) / 2) / max(1, count - 1)
        rank = ascending if config.higher_is_closer else 1 - ascending
        paraphrase = yes > no
        rows.append((pair.pk, pair.external_id, "paraphrase" if paraphrase else "not paraphrase", rank))
    ranked = sorted(rows, key=lambda row: (-(1 - row[3] if row[2] == "paraphrase" else row[3]), row[0]))
    return [(name, verdict, rank, 1 - rank if verdict == "paraphrase" else rank) for _, name, verdict, rank in ranked][
        :limit
    ]


def shown(rows: list[pair_pages.Disagreement] | None) -> list[tuple[str, str, float, float]]:
    assert rows is not None
    return [(row.external_id, row.volunteers, row.rank, row.disagreement) for row in rows]


def page_rows(page: str) -> list[str]:
    table = page.split('id="worst">', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-pair="\d+"><th scope="row"><a href="[^"]+">([^<]+)</a>', table)


def test_the_inline_worst_disagreements_equal_the_definition_ties_included() -> None:
    campaign, closer, distance = scored_campaign("inline", 40, seed=3)
    for config in (closer, distance):
        expected = independent_worst(campaign, config)
        assert len(expected) == 20
        assert len({row[3] for row in expected}) < len(expected)  # tied disagreements, ordered by id
        found = pair_pages.worst_pairs(campaign, config.pk)
        assert found.current and found.notice == ""
        assert shown(found.value) == expected
        assert shown(pair_pages.worst_pairs(campaign, config.pk, limit=200).value) == independent_worst(
            campaign, config, 200
        )


def work(queue_dir: Path) -> None:
    """What the interactive worker does: take the queued tasks and run them, job record included."""
    for path in sorted(queue_dir.iterdir()):
        kwargs = json.loads(base64.b64decode(json.loads(path.read_text())["body"]))[1]
        path.unlink()
        tasks._refresh_worst_disagreements(**kwargs)


def test_a_large_campaigns_worst_disagreements_are_kept_and_dated(
    staff_client: Client, settings, queue_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_DASHBOARD_INLINE_PAIRS = 10
    campaign, closer, distance = scored_campaign("large", 40, seed=5)
    url = f"/staff/campaigns/large/pairs/?metric={closer.pk}"
    first = staff_client.get(url).content.decode()
    # Nothing kept yet: no row at all, and the computation is queued on the interactive queue.
    assert "The worst disagreements are being computed for the first time. Worst disagreements: waiting" in first
    assert page_rows(first) == []
    assert "The list is being computed (see above)." in first
    assert [(queue, name) for queue, name, _ in messages_in(queue_dir)] == [
        ("interactive", "scoring.reports.tasks.refresh_worst_disagreements")
    ]
    staff_client.get(url)
    assert len(messages_in(queue_dir)) == 1  # one job per version of the data

    work(queue_dir)
    fresh = staff_client.get(url).content.decode()
    assert 'id="worst-notice"' not in fresh
    expected = independent_worst(campaign, closer)
    assert page_rows(fresh) == [row[0] for row in expected]
    assert shown(pair_pages.worst_pairs(campaign, closer.pk).value) == expected
    # Another configuration is its own list.
    assert pair_pages.worst_pairs(campaign, distance.pk).value is None
    work(queue_dir)
    assert shown(pair_pages.worst_pairs(campaign, distance.pk).value) == independent_worst(campaign, distance)

    # Two new answers turn a pair around: the page keeps the last list, says so, and refreshes.
    before = timezone.now()
    target = Pair.objects.get(campaign=campaign, external_id=expected[0][0])
    answer = "very_different" if expected[0][1] == "paraphrase" else "same_meaning"
    for _ in range(2):
        make_judgement(target, make_volunteer(campaign), answer)
        make_judgement(target, make_volunteer(campaign), answer)
    stale = staff_client.get(url).content.decode()
    computed = re.search(
        r"Worst disagreements as of (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC, 4 answers since, refreshing\.", stale
    )
    assert computed is not None, stale
    moment = datetime.datetime.strptime(computed.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.UTC)
    assert before - datetime.timedelta(minutes=1) <= moment <= before + datetime.timedelta(seconds=1)
    assert page_rows(stale) == [row[0] for row in expected]  # the kept list, dated
    assert len(messages_in(queue_dir)) == 1

    work(queue_dir)
    refreshed = staff_client.get(url).content.decode()
    assert 'id="worst-notice"' not in refreshed
    now_expected = independent_worst(campaign, closer)
    assert now_expected != expected
    assert page_rows(refreshed) == [row[0] for row in now_expected]


def statements(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


def test_the_pair_list_runs_as_many_statements_for_a_larger_campaign(
    staff_client: Client, settings, queue_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_DASHBOARD_INLINE_PAIRS = 10
    small = scored_campaign("small", 12, seed=1)
    large = scored_campaign("bigger", 60, seed=2)
    for number, (origin, system) in enumerate([("a", "x"), ("b", "y")]):  # the same menus in both
        for campaign, _, _ in (small, large):
            make_pair(campaign, external_id=f"menu-{number}", origin=origin, system=system)
    counts: dict[str, list[int]] = {}
    for campaign, closer, _ in (small, large):
        for view, path in (("plain", "pairs/"), ("by metric", f"pairs/?metric={closer.pk}")):
            cache.clear()
            caches["analyses"].clear()
            counts.setdefault(f"{view} (first)", []).append(
                statements(staff_client, f"/staff/campaigns/{campaign.slug}/{path}")
            )
            counts.setdefault(f"{view} (repeat)", []).append(
                statements(staff_client, f"/staff/campaigns/{campaign.slug}/{path}")
            )
            work(queue_dir)
            counts.setdefault(f"{view} (after the worker)", []).append(
                statements(staff_client, f"/staff/campaigns/{campaign.slug}/{path}")
            )
    assert all(small_count == large_count for small_count, large_count in counts.values()), counts
