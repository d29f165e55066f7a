"""Every volunteer page costs the same on a large campaign as on a small one.

One volunteer walks the whole flow (welcome, guidelines, training pairs and their feedback,
end of training, check pairs, campaign pairs, end page) twice: on a small campaign alone in
the database, then on a large one that holds other volunteers' judgements, beside another
large campaign. Each request's statements are counted (they must be the same in number), and
on PostgreSQL every SELECT is also run under ``EXPLAIN ANALYZE`` with sequential scans off (the
planner then uses an index wherever one can serve, as it does on a table of a million rows):
the rows each statement reads may not grow with the campaign. A campaign that fills most of
the pairs table is walked once more under the planner's own settings, where a bare ``LIMIT``
would be planned as a sequential scan; so is a campaign whose training and check pairs many
volunteers met since the last ``ANALYZE``, where a pair's own index would read all of theirs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.models import Q
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotate.counters import recount_judgements
from annotate.models import Assignment, Campaign, Judgement, Pair, Volunteer
from tests.builders import make_campaign, make_training_pairs, make_volunteer
from tests.pair_page import item_on_page

pytestmark = pytest.mark.django_db

TRAINING = 2
CHECKS = 3
QUOTA = 3
SMALL_POOL = 12
LARGE_POOL = 1500
# Judgements of the large campaign by other volunteers (the pool still has unjudged pairs).
OTHERS_JUDGEMENTS = 300
# The most rows one volunteer statement may read: the volunteer's own rows, the training, the
# checks and a quota's worth of pairs; a statement that walks the pool reads 1,500 or more.
ROWS_PER_STATEMENT = 60
# Start points of the allocator's walk are drawn between 0 and 2**31 - 1: pairs with the
# largest key are always ahead of the start, so no walk wraps around (the same statements
# whatever the draw).
LAST_KEY = 2**31 - 1
# Pairs of a campaign beside the walked one, where a sequential scan must not be the cheap way.
BIG_TABLE = 20_000


def answer(volunteer: Volunteer, pairs: Iterable[Pair], *, served: bool = False) -> None:
    """The volunteer's answers to ``pairs``, stored in one statement (``served``: with the
    answered assignments that served them)."""
    pairs = list(pairs)
    if served:
        Assignment.objects.bulk_create(
            Assignment(
                volunteer=volunteer,
                pair=pair,
                source_on_top=True,
                shown_at=volunteer.created_at,
                expires_at=volunteer.created_at,
                answered_at=volunteer.created_at,
            )
            for pair in pairs
        )
    Judgement.objects.bulk_create(
        Judgement(
            volunteer=volunteer,
            pair=pair,
            label="same_meaning",
            source_on_top=True,
            is_training=pair.is_training,
            shown_at=volunteer.created_at,
            answered_at=volunteer.created_at,
        )
        for pair in pairs
    )


def build(pool: int, *, crowded: bool) -> Campaign:
    """A campaign with training, check pairs at fixed places and ``pool`` campaign pairs;
    ``crowded``: others' judgements in it and another campaign of the same size beside it."""
    campaign = make_campaign(quota=QUOTA, judges_per_pair=2, check_positions="1, 2, 3")
    make_training_pairs(campaign, TRAINING)
    Pair.objects.bulk_create(
        Pair(
            campaign=campaign,
            external_id=f"check-{n}",
            source=f"A check {n}.",
            hypothesis=f"A check {n}.",
            is_check=True,
            expected_label="same_meaning",
        )
        for n in range(CHECKS)
    )
    keys = [LAST_KEY] * 6 + [n * (LAST_KEY // pool) for n in range(pool - 6)]
    Pair.objects.bulk_create(
        (
            Pair(
                campaign=campaign,
                external_id=f"p{n}",
                source=f"Source {n}.",
                hypothesis=f"Hypothesis {n}.",
                shuffle_key=key,
            )
            for n, key in enumerate(keys)
        ),
        batch_size=2000,
    )
    if crowded:
        other = make_campaign()
        Pair.objects.bulk_create(
            (
                Pair(campaign=other, external_id=f"o{n}", source=f"Other {n}.", hypothesis=f"Other {n}.")
                for n in range(pool)
            ),
            batch_size=2000,
        )
        judged = Pair.objects.filter(campaign=campaign, is_training=False, is_check=False, shuffle_key__lt=LAST_KEY)
        for start in range(0, OTHERS_JUDGEMENTS, 100):
            answer(make_volunteer(campaign), judged.order_by("id")[start : start + 100])
        recount_judgements(campaign)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE annotate_pair; ANALYZE annotate_judgement; ANALYZE annotate_assignment")
    return campaign


def rows_read(plan: dict[str, Any]) -> int:
    """Rows a plan node and its children produced or threw away, over all their loops."""
    loops = plan.get("Actual Loops", 1)
    own = (plan.get("Actual Rows", 0) + plan.get("Rows Removed by Filter", 0)) * loops
    return int(own) + sum(rows_read(child) for child in plan.get("Plans", []))


def scans(plan: dict[str, Any]) -> Iterator[str]:
    """``"Seq Scan on <table>"`` for each sequential scan in the plan."""
    if plan["Node Type"] == "Seq Scan":
        yield f"Seq Scan on {plan['Relation Name']}"
    for child in plan.get("Plans", []):
        yield from scans(child)


@dataclass
class Statement:
    sql: str
    rows: int = 0
    seq_scans: list[str] = field(default_factory=list)


@contextmanager
def explained(found: list[Statement], *, planner_free: bool = False) -> Iterator[None]:
    """Run each SELECT once under EXPLAIN ANALYZE before it runs for real: with sequential scans
    off, or (``planner_free``) with the planner's own settings."""
    if connection.vendor != "postgresql":
        yield
        return

    def explain(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if not many and sql.lstrip().upper().startswith("SELECT"):
            # A plain cursor of the same connection (the statement's own may be a named,
            # server-side one, which cannot run EXPLAIN); it bypasses the query log.
            with context["connection"].connection.cursor() as raw:
                raw.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
                plan = raw.fetchone()[0][0]["Plan"]
            found.append(Statement(sql, rows_read(plan), list(scans(plan))))
        return execute(sql, params, many, context)

    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL enable_seqscan = {'on' if planner_free else 'off'}")
    try:
        with connection.execute_wrapper(explain):
            yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = on")


@dataclass
class Request:
    label: str
    statements: int
    explained: list[Statement]


def heavy_statements(requests: list[Request], *, seq_scans_too: bool = False) -> list[str]:
    """Each explained statement that read more than ``ROWS_PER_STATEMENT`` rows (``seq_scans_too``:
    or scanned a table sequentially), with its request and the start of its SQL."""
    return [
        f"{request.label}: {statement.rows} rows, {statement.seq_scans}: {statement.sql[:300]}"
        for request in requests
        for statement in request.explained
        if statement.rows > ROWS_PER_STATEMENT or (seq_scans_too and statement.seq_scans)
    ]


def page_kind(path: str, campaign: Campaign, token: str) -> str:
    named = path.replace(campaign.slug, "<slug>").replace(token or "<token>", "<token>")
    return re.sub(r"/\d+/", "/<pair>/", named)


def walk(campaign: Campaign, *, planner_free: bool = False) -> list[Request]:
    """One volunteer's whole visit, each request with its statements (``planner_free``: explained
    with the planner's own settings, see :func:`explained`)."""
    client = Client()
    requests: list[Request] = []
    token = ""

    def call(method: str, path: str, data: dict[str, Any] | None = None) -> Any:
        plans: list[Statement] = []
        with CaptureQueriesContext(connection) as queries, explained(plans, planner_free=planner_free):
            response = getattr(client, method)(path, data or {})
        assert response.status_code in (200, 302), (method, path, response.status_code)
        requests.append(Request(f"{method.upper()} {page_kind(path, campaign, token)}", len(queries), plans))
        return response

    welcome = f"/c/{campaign.slug}/"
    call("get", welcome)
    token = call("post", welcome, {"consent": "on", "english_level": "good"}).url.split("/")[2]
    home = f"/v/{token}/"
    call("get", f"{home}guidelines/")
    call("post", f"{home}guidelines/")
    for _ in range(TRAINING + CHECKS + QUOTA + 2):
        response = call("get", home)
        if response.status_code == 302:
            if response.url.endswith("/training-done/"):
                call("get", response.url)
                call("post", response.url)
                continue
            assert response.url.endswith("/done/"), response.url
            call("get", response.url)
            break
        item = item_on_page(response.content.decode())
        answered = call("post", f"{home}answer/", {"pair": item, "label": "same_meaning"})
        if "/training/" in answered.url:
            call("get", answered.url)
    else:
        pytest.fail("the volunteer never reached the end page")
    volunteer = Volunteer.objects.get(token=token)
    assert Judgement.objects.filter(volunteer=volunteer).count() == TRAINING + CHECKS + QUOTA
    return requests


def test_every_volunteer_page_costs_the_same_on_a_large_campaign() -> None:
    small = walk(build(SMALL_POOL, crowded=False))
    Volunteer.objects.all().delete()
    large = walk(build(LARGE_POOL, crowded=True))
    assert [r.label for r in large] == [r.label for r in small]
    grew = {
        r.label: (s.statements, r.statements) for s, r in zip(small, large, strict=True) if r.statements != s.statements
    }
    assert grew == {}, f"statements per request (small pool, large pool): {grew}"
    if connection.vendor != "postgresql":
        return
    heavy = heavy_statements(large, seq_scans_too=True)
    assert heavy == [], "\n".join(heavy)
    # Every page was looked at (each request ran SELECTs that were explained).
    assert all(request.explained for request in large)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="plans are PostgreSQL's")
def test_a_campaign_that_fills_most_of_the_table_is_walked_by_its_indexes() -> None:
    """The planner's own choice, not only what an index can serve: a campaign that holds most of
    the pairs table, stored after another campaign's rows. Where the planner reckons that nearly
    every row qualifies, a ``LIMIT`` without an order it can take from an index becomes a
    sequential scan that reads the other campaign's rows first: a cost set by the rest of the
    database, not by the page."""
    before = make_campaign()
    Pair.objects.bulk_create(
        (
            Pair(campaign=before, external_id=f"b{n}", source=f"Before {n}.", hypothesis=f"Before {n}.")
            for n in range(400)
        ),
        batch_size=2000,
    )
    large = walk(build(LARGE_POOL, crowded=False), planner_free=True)
    heavy = heavy_statements(large)
    assert heavy == [], "\n".join(heavy)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="plans are PostgreSQL's")
def test_pairs_every_volunteer_meets_are_read_by_the_volunteers_own_rows() -> None:
    """Every volunteer meets the same training and check pairs: a statement that reaches one
    volunteer's answer or assignment through such a pair's index reads every volunteer's, a cost
    that grows with the campaign's volunteers. Theirs came after the last ``ANALYZE``, as in a
    live campaign between two passes of autovacuum, and the planner keeps its own settings."""
    campaign = build(LARGE_POOL, crowded=True)
    # Others' answers and assignments in the tables' statistics: many volunteers with a few
    # each, so the planner reckons a pair has about one and a volunteer ten. The tables are large
    # enough that reading one whole is never the cheap way to a visit's few rows.
    other = Campaign.objects.exclude(pk=campaign.pk).get()
    more = Pair.objects.bulk_create(
        (
            Pair(campaign=other, external_id=f"more{n}", source=f"More {n}.", hypothesis=f"More {n}.")
            for n in range(BIG_TABLE)
        ),
        batch_size=5000,
    )
    others = Volunteer.objects.bulk_create(
        Volunteer(campaign=other, english_level="good", token=f"other-{n}") for n in range(BIG_TABLE // 10)
    )
    for number, someone in enumerate(others):
        answer(someone, more[number * 10 : number * 10 + 10], served=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotate_pair; ANALYZE annotate_judgement; ANALYZE annotate_assignment")
    shared = list(Pair.objects.filter(Q(is_training=True) | Q(is_check=True), campaign=campaign))
    for _ in range(2 * ROWS_PER_STATEMENT):
        answer(make_volunteer(campaign), shared, served=True)
    large = walk(campaign, planner_free=True)
    heavy = heavy_statements(large)
    assert heavy == [], "\n".join(heavy)


def test_the_check_pairs_index_is_made_by_a_migration() -> None:
    """The partial index that serves the check-pair count, as the migrations build it."""
    state = MigrationLoader(connection).project_state()
    indexes = {index.name: index for index in state.models["annotate", "pair"].options["indexes"]}
    index = indexes["pair_campaign_checks_idx"]
    assert index.fields == ["campaign"]
    assert index.condition == Q(is_check=True)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'pair_campaign_checks_idx'")
            (definition,) = cursor.fetchone()
        assert definition.endswith("(campaign_id) WHERE is_check")
