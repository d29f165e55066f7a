"""The staff pages' quality verdicts at any campaign size: one pair's judges from their own
answers (exact, whatever the campaign), and above ``PARAEVAL_INLINE_QUALITY_JUDGEMENTS`` the
volunteers page's last kept verdicts, dated, while the ``interactive`` worker refreshes them."""

from __future__ import annotations

import base64
import datetime
import json
import re
from pathlib import Path

import pytest
from django.core.cache import cache, caches
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate import quality
from annotate.labels import Label
from annotate.models import Campaign, Pair, Volunteer
from annotate.pseudonyms import volunteer_pseudonym
from scoring.reports import tasks
from tests.builders import make_campaign, make_judgement, make_pair, make_staff, make_volunteer
from tests.workers_support import messages_in

pytestmark = pytest.mark.django_db

LABELS = (Label.SAME_MEANING, Label.VERY_DIFFERENT, Label.MOSTLY_SIMILAR)


@pytest.fixture
def staff_client() -> Client:
    client = Client()
    client.force_login(make_staff("quality", "x", superuser=True))
    return client


@pytest.fixture(autouse=True)
def _empty_caches() -> None:
    cache.clear()
    caches["analyses"].clear()


def study(slug: str = "kept") -> tuple[Campaign, list[Pair], list[Volunteer]]:
    """Four volunteers on five pairs and a check: one fails the check, one gives one answer
    for everything, one is kept by staff although the rule flags them (failed check)."""
    campaign = make_campaign(
        slug=slug, exclude_failed_checks=1, exclude_same_answer_share=0.9, exclude_median_seconds=None
    )
    check = make_pair(campaign, is_check=True, expected_label=Label.SAME_MEANING.value)
    pairs = [make_pair(campaign, external_id=f"{slug}-{n}") for n in range(5)]
    people = [make_volunteer(campaign) for _ in range(3)]
    people.append(make_volunteer(campaign, exclusion_override="include", exclusion_note="misread"))
    now = timezone.now()
    for v, volunteer in enumerate(people):
        make_judgement(check, volunteer, LABELS[0] if v in (0, 2) else LABELS[1], is_check=True)
        for n, pair in enumerate(pairs):
            label = LABELS[0] if v == 2 else LABELS[(n + v) % 3]
            seconds = 10 + 3 * n + v
            make_judgement(pair, volunteer, label, shown_at=now, answered_at=now + datetime.timedelta(seconds=seconds))
    return campaign, pairs, people


def excluded_cells(page: str) -> dict[str, str]:
    """One pair's page: each judge's pseudonym and what the Excluded column says."""
    rows = re.findall(r"<code>([^<]+)</code>.*?data-label=\"Excluded:\">([^<]*)</td>", page, re.S)
    return dict(rows)


def test_one_pair_shows_who_the_campaign_pass_excludes(staff_client: Client) -> None:
    campaign, pairs, people = study()
    inline = {verdict.volunteer_id: verdict for verdict in quality.campaign_quality(campaign)}
    # The known answer: the second fails the check, the third always says the same; the fourth
    # fails the check but staff keep them.
    assert [inline[v.pk].excluded for v in people] == [False, True, True, False]
    own = quality.rule_verdicts(campaign, [v.pk for v in people])
    for volunteer in people:
        kept, full = own[volunteer.pk], inline[volunteer.pk]
        assert (kept.excluded, kept.rule_reasons, kept.checks_passed, kept.campaign_answers) == (
            full.excluded,
            full.rule_reasons,
            full.checks_passed,
            full.campaign_answers,
        )
        assert (kept.median_seconds, kept.top_answer_share) == (full.median_seconds, full.top_answer_share)
    page = staff_client.get(f"/staff/campaigns/kept/pairs/{pairs[0].pk}/").content.decode()
    assert excluded_cells(page) == {
        volunteer_pseudonym(v.token): ("excluded" if inline[v.pk].excluded else "no") for v in people
    }


def statements(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


def test_one_pair_page_runs_as_many_statements_for_a_larger_pool(staff_client: Client) -> None:
    small, small_pairs, _ = study("small")
    large, large_pairs, _ = study("large")
    for extra in range(30):  # a larger pool: more pairs, more volunteers judging them
        pair = make_pair(large, external_id=f"more-{extra}")
        for volunteer in (make_volunteer(large), make_volunteer(large)):
            make_judgement(pair, volunteer, LABELS[extra % 3])
    for path in ("pairs/{pk}/", "volunteers/"):
        counts = []
        for campaign, pairs in ((small, small_pairs), (large, large_pairs)):
            caches["analyses"].clear()
            cache.clear()
            counts.append(statements(staff_client, f"/staff/campaigns/{campaign.slug}/" + path.format(pk=pairs[0].pk)))
        assert counts[0] == counts[1], (path, counts)


def summary(page: str) -> dict[str, str]:
    return dict(re.findall(r'<dd data-count="([\w-]+)">([^<]+)</dd>', page))


def work(queue_dir: Path) -> None:
    """What the interactive worker does: take the queued refreshes and run them, job record included."""
    for path in sorted(queue_dir.iterdir()):
        kwargs = json.loads(base64.b64decode(json.loads(path.read_text())["body"]))[1]
        path.unlink()
        tasks._refresh_volunteer_verdicts(**kwargs)


def test_above_the_threshold_the_page_shows_the_kept_verdicts_dated(
    staff_client: Client, settings, queue_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_INLINE_QUALITY_JUDGEMENTS = 10  # the study has 20 corpus judgements
    campaign, pairs, people = study()
    url = "/staff/campaigns/kept/volunteers/"
    first = staff_client.get(url).content.decode()
    # Nothing kept yet: no count at all (never zeros), and the refresh is queued on interactive.
    assert "Quality verdicts are being computed for the first time. Quality verdicts: waiting for an" in first
    assert summary(first) == {}
    assert "The verdicts are being computed (see above)." in first
    assert [(queue, name) for queue, name, _ in messages_in(queue_dir)] == [
        ("interactive", "scoring.reports.tasks.refresh_volunteer_verdicts")
    ]
    staff_client.get(url)
    assert len(messages_in(queue_dir)) == 1  # one job per version of the data

    work(queue_dir)
    fresh = staff_client.get(url).content.decode()
    assert 'id="verdicts-notice"' not in fresh
    assert summary(fresh)["started"] == "4" and summary(fresh)["excluded"] == "2"
    inline = quality.campaign_quality(campaign)
    for verdict in inline:  # the figures of the inline pass, agreement included
        agreement = f"{round(verdict.agreement * 100)}% of {verdict.agreement_pairs}" if verdict.agreement else "—"
        assert f'data-label="Agreement with others:">{agreement}</td>' in fresh

    # A new volunteer answers twice: the page keeps the last verdicts, says so, and refreshes.
    newcomer = make_volunteer(campaign)
    before = timezone.now()
    make_judgement(pairs[0], newcomer, LABELS[0])
    make_judgement(pairs[1], newcomer, LABELS[0])
    stale = staff_client.get(url).content.decode()
    computed = re.search(
        r"Quality verdicts as of (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC, 2 answers since, refreshing\.", stale
    )
    assert computed is not None, stale
    moment = datetime.datetime.strptime(computed.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.UTC)
    assert before - datetime.timedelta(minutes=1) <= moment <= before + datetime.timedelta(seconds=1)
    assert summary(stale)["started"] == "4"  # the kept figures, dated: not the newcomer yet
    assert volunteer_pseudonym(newcomer.token) not in stale
    assert len(messages_in(queue_dir)) == 1  # the refresh for the new data (the first was run)
    # A staff override shows at once on the kept verdicts.
    Volunteer.objects.filter(pk=people[0].pk).update(exclusion_override="exclude", exclusion_note="bot")
    overridden = staff_client.get(url).content.decode()
    assert "<strong>excluded</strong>: excluded by staff: bot" in overridden
    assert summary(overridden)["excluded"] == "3"

    work(queue_dir)
    refreshed = staff_client.get(url).content.decode()
    assert 'id="verdicts-notice"' not in refreshed
    assert summary(refreshed)["started"] == "5"
    assert volunteer_pseudonym(newcomer.token) in refreshed


def test_below_the_threshold_the_page_is_computed_inline(staff_client: Client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_INLINE_QUALITY_JUDGEMENTS = 21
    study()
    page = staff_client.get("/staff/campaigns/kept/volunteers/").content.decode()
    assert 'id="verdicts-notice"' not in page
    assert summary(page)["started"] == "4" and summary(page)["excluded"] == "2"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_an_interactive_worker_refreshes_the_kept_verdicts(tmp_path: Path, settings, client: Client) -> None:  # type: ignore[no-untyped-def]
    from tests.workers_support import (
        WorkerProcess,
        filesystem_broker,
        shared_database_url,
        wait_for,
        worker_env,
    )

    data = tmp_path / "data"
    (data / "broker").mkdir(parents=True)
    # This process reads the cache the worker writes: the worker's data folder's.
    settings.CACHES = {
        **settings.CACHES,
        "analyses": {**settings.CACHES["analyses"], "LOCATION": str(data / "cache" / "analyses")},
    }
    if "KEY_PREFIX" in settings.CACHES["analyses"]:
        pytest.skip("REDIS_URL is set: this test runs the file-based shared cache")
    settings.PARAEVAL_INLINE_QUALITY_JUDGEMENTS = 10
    campaign, _, _ = study("worked")
    client.force_login(make_staff("worker-staff", "x", superuser=True))
    url = "/staff/campaigns/worked/volunteers/"
    with filesystem_broker(data / "broker"):
        assert "computed for the first time" in client.get(url).content.decode()
        env = worker_env(
            DATABASE_URL=shared_database_url(), PARAEVAL_DATA_DIR=str(data), PARAEVAL_INLINE_QUALITY_JUDGEMENTS="10"
        )
        env.pop("REDIS_URL", None)
        worker = WorkerProcess(env, tmp_path, name="quality", queues="interactive").start()
        try:
            page = wait_for(
                lambda: body if 'id="verdicts-notice"' not in (body := client.get(url).content.decode()) else None,
                timeout=120,
                what=f"the verdicts from the worker\n{worker.log()[-3000:]}",
            )
        finally:
            worker.stop()
    assert "refresh_volunteer_verdicts" in worker.log()
    assert summary(page) == {
        "started": "4",
        "finished": "0",
        "in-progress": "4",
        "returned": "0",
        "excluded": "2",
        "median-minutes": "—",
    }
    assert sum(v.excluded for v in quality.campaign_quality(campaign)) == 2
