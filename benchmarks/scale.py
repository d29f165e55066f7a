"""Volunteer and staff pages on campaigns of 2,000 to 1,000,000 pairs: what grows with size.

Not a test: a script that prints figures. In this process, on a throwaway PostgreSQL database
(``--database postgres://…/name``, created and dropped at the end), for each pool size in
``--sizes`` and each number of others' judgements in ``--judgements`` it

1. builds a campaign of that many pairs (one training pair, one check pair met first, a quota
   of three) in bulk (``INSERT … SELECT generate_series``), the judgements of other volunteers
   (bulk too; at most one per pair, on the first pairs, so that the pool keeps unjudged pairs:
   a small pool holds fewer than asked, the line says how many) and, with ``--scores``, every
   enabled metric's score of every pair;
2. walks ``--volunteers`` volunteers through the whole visit with Django's test client
   (welcome, guidelines, the training pair and its feedback, end of training, the pair page,
   the answer POST with its scoring receivers, the end page) and keeps, per kind of request,
   the median CPU of this process (``time.process_time``), the median CPU of the database
   connection's PostgreSQL backend (its time on the CPU in nanoseconds, ``/proc/<pid>/schedstat``
   of ``pg_backend_pid()``; where the kernel keeps no schedstat, ``/proc/<pid>/stat`` in clock
   ticks of 10 ms, and then the mean: only a mean over many visits says something) and the
   number of statements (median);
3. runs every SELECT of one more visit under ``EXPLAIN ANALYZE`` with the planner's own
   settings and flags those that read more than 60 rows of tables of over 10,000 rows, or scan
   such a campaign table (pairs, judgements, assignments, scores) sequentially;
4. requests the staff pages as a superuser (home, dashboard data, volunteers, pair list with and
   without a metric, one pair, status, the first chunk of an export), each twice: first with
   the page caches and the kept analyses emptied, then again; for each, the CPU of this process,
   the CPU of the backend and the statements (a statement that runs past 60 s fails the page,
   shown as status 0, instead of hanging the run). The dashboard's data is measured six times:
   "first" (the request after a change: for a campaign over ``PARAEVAL_DASHBOARD_INLINE_PAIRS``
   pairs it only queues the report and answers "computing"), "worker" (not a request: the
   tasks it queued on the ``interactive`` queue, run in this process as a worker would, never
   marked ``!``), "after worker" (the poll that picks them up), "worker again" and "after worker
   again" (the intervals, queued by that poll when the report came from the queue) and "repeat"
   (a reload while nothing changed).

It prints each figure as a ratio to the first size with the same judgements (the volunteer
target: within 10 % at 1,000,000 pairs; the staff target: 150 ms of web and PostgreSQL CPU per
page, marked ``!`` when missed). ``--volunteers 0`` measures the staff pages only. A later
size's volunteer visits alternate with visits of the first size's campaign (still there), the
one or the other first in turn, and its ratios are to those: requests made in the same seconds,
so that another load on the machine weighs on both sides alike, each ratio taken within one
order and the two orders' combined (:func:`balanced_ratio`). Each build ends with
``VACUUM (ANALYZE)``, as autovacuum leaves a campaign that volunteers visit, so that autovacuum's
work on the fresh rows does not run beside the visits; then the process collects and freezes its
garbage (``gc.freeze``), so that no collection during a visit walks what the build left behind.

    .venv/bin/python benchmarks/scale.py --database postgres://postgres@127.0.0.1:5432/bench_scale
    .venv/bin/python benchmarks/scale.py --database … --sizes 2000,100000 --judgements 0
    .venv/bin/python benchmarks/scale.py --database … --sizes 2000,1000000 --judgements 300000 --volunteers 0
    .venv/bin/python benchmarks/scale.py --database … --sizes 2000,1000000 --judgements 300000 --volunteers 0 \
        --pages "pair list,export start"
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAIR_FIELD = re.compile(r'name="pair" value="(\d+)"')
GROWING_TABLES = ("annotate_pair", "annotate_judgement", "annotate_assignment", "scoring_score")
SEQ_SCAN = re.compile(r"Seq Scan on (\w+)")
CLK_TCK = os.sysconf("SC_CLK_TCK")
# The most rows one volunteer statement may read (its own rows, the training and check pairs,
# a quota's worth of pool); one that walks the pool reads thousands.
ROWS_PER_STATEMENT = 60
# Campaign pairs each visit judges (one judge per pair).
QUOTA = 3
# A sequential scan of a table this small is the planner's right choice, not a walk of a campaign.
SCANNED_ROWS_ALLOWED = 10_000


@dataclass
class Figures:
    web_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    pg_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statements: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    # Whether each measured visit went before the other campaign's (see :func:`balanced_ratio`).
    went_first: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    leading: bool = True
    flagged: list[str] = field(default_factory=list)
    staff: dict[str, Any] = field(default_factory=dict)  # StaffView per page and view
    judgements: int = 0


def configure(data_dir: Path, database: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="paraeval.settings",
        PARAEVAL_DATA_DIR=str(data_dir),
        SECRET_KEY="scale-benchmark-key",
        ALLOWED_HOSTS="testserver",
        DATABASE_URL=database,
        PARAEVAL_START_RATE="100000/10m",  # every visit comes from the one test client address
    )
    for name in ("REDIS_URL", "PARAEVAL_METRICS", "DEBUG"):
        os.environ.pop(name, None)
    sys.path.insert(0, str(ROOT))
    (data_dir / "staticfiles").mkdir(parents=True, exist_ok=True)


def admin(url: str) -> Any:
    import psycopg

    return psycopg.connect(f"{url.rsplit('/', 1)[0]}/postgres", autocommit=True)


# The scheduler's own count of a process's time on the CPU, in nanoseconds: a request's few
# milliseconds of PostgreSQL show, where /proc/<pid>/stat counts whole 10 ms ticks.
PRECISE_BACKEND_CPU = Path("/proc/self/schedstat").exists()


def backend_cpu_ms(pid: int) -> float:
    """CPU of one PostgreSQL backend (the server runs on this machine), in milliseconds."""
    if PRECISE_BACKEND_CPU:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e6
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / CLK_TCK


def backend_average(values: list[float]) -> float:
    """The median of precise readings; the mean of tick counts (a median of ticks is 0 or 10)."""
    return statistics.median(values) if PRECISE_BACKEND_CPU else statistics.fmean(values)


def copy_rows(model: Any, template_pk: int, count: int, overrides: dict[str, str]) -> None:
    """``count`` copies of one row made by ``INSERT … SELECT generate_series``; ``overrides``
    gives SQL (in terms of ``g``, 1…count) for the columns that must differ."""
    from django.db import connection

    columns = [str(f.column) for f in model._meta.concrete_fields if not f.primary_key]
    values = [overrides.get(column, f't."{column}"') for column in columns]
    table = model._meta.db_table
    names = ", ".join(f'"{column}"' for column in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f'INSERT INTO "{table}" ({names}) '
            f'SELECT {", ".join(values)} FROM "{table}" t, generate_series(1, %s) g WHERE t.id = %s',
            [count, template_pk],
        )


def build(size: int, judgements: int, scores: bool, number: int, visits: int) -> tuple[Any, int]:
    """The campaign, its pairs, others' judgements and (``scores``) every pair's scores, with
    pairs left unjudged for ``visits`` volunteers."""
    from django.db import connection
    from django.utils import timezone

    from annotate import flow
    from annotate.counters import recount_judgements
    from annotate.models import Campaign, Judgement, Pair
    from scoring.models import Score
    from scoring.pipeline import configs

    campaign = Campaign.objects.create(
        slug=f"scale-{number}",
        name=f"Scale {number}",
        quota=QUOTA,
        judges_per_pair=1,
        check_positions="1",
        exclude_median_seconds=None,
    )
    Pair.objects.create(
        campaign=campaign,
        external_id="training-1",
        source="A training pair.",
        hypothesis="A training pair, said again.",
        is_training=True,
        training_position=1,
        expected_label="same_meaning",
        explanation="They say the same.",
    )
    Pair.objects.create(
        campaign=campaign,
        external_id="check-1",
        source="A check pair.",
        hypothesis="A check pair.",
        is_check=True,
        expected_label="same_meaning",
    )
    template = Pair.objects.create(campaign=campaign, external_id="p0", source="Source 0.", hypothesis="Hypothesis 0.")
    copy_rows(
        Pair,
        template.pk,
        size - 1,
        {
            "external_id": "'p' || g",
            "source": "'The committee number ' || g || ' approved the budget on Friday.'",
            "hypothesis": "'On Friday committee ' || g || ' passed the budget.'",
            "shuffle_key": "(g * 2654435761::bigint) %% 2147483647",
        },
    )
    # At most half the pool, and never so many that the visits would find the campaign full.
    judged = max(0, min(judgements, size // 2, size - 1 - QUOTA * visits))
    if judged:
        others = flow.start_volunteer(campaign, english_level="good", consented=True)
        # One volunteer per 100 judgements, each judging 100 pairs (one judgement per pair).
        copy_rows(type(others), others.pk, -(-judged // 100) - 1, {"token": "'scale-' || g || '-' || t.id"})
        now = timezone.now()
        with connection.cursor() as cursor:
            cursor.execute(
                f'INSERT INTO "{Judgement._meta.db_table}" (volunteer_id, pair_id, label, source_on_top, position,'
                " is_training, is_check, shown_at, answered_at)"
                " SELECT v.ids[p.n / 100 + 1], p.id, 'same_meaning', false, 1, false, false, %s, %s FROM"
                # An array of the volunteers' ids, indexed by the pair's rank: no join to plan.
                ' (SELECT array_agg(id ORDER BY id) AS ids FROM "annotate_volunteer" WHERE campaign_id = %s) v,'
                ' (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM "annotate_pair"'
                "  WHERE campaign_id = %s AND NOT is_training AND NOT is_check ORDER BY id LIMIT %s) p",
                [now, now, campaign.pk, campaign.pk, judged],
            )
        recount_judgements(campaign)
    if scores:
        rows = configs.enabled_configs()
        # Scored a day ago: the status page's throughput counts the scores of the last hour, and
        # a million scores computed in that hour is not the campaign the pages are measured on.
        earlier = timezone.now() - timedelta(days=1)
        first = Score.objects.create(pair=template, metric_config=rows[0], value=0.5, computed_at=earlier)
        with connection.cursor() as cursor:
            columns = [str(f.column) for f in Score._meta.concrete_fields if not f.primary_key]
            values = [
                {"pair_id": "p.id", "metric_config_id": "c.id"}.get(column, f's."{column}"') for column in columns
            ]
            cursor.execute(
                f'INSERT INTO "{Score._meta.db_table}" ({", ".join(columns)}) SELECT {", ".join(values)}'
                f' FROM "{Score._meta.db_table}" s, "annotate_pair" p, "{rows[0]._meta.db_table}" c'
                " WHERE s.id = %s AND p.campaign_id = %s AND NOT p.is_training AND c.id = ANY(%s)"
                " AND NOT (p.id = %s AND c.id = %s)",
                [first.pk, campaign.pk, [row.pk for row in rows], template.pk, rows[0].pk],
            )
    with connection.cursor() as cursor:
        # VACUUM as well as ANALYZE: a fresh bulk load leaves autovacuum minutes of work (the
        # visibility map, hint bits) that would otherwise run beside the visits and be measured
        # as the campaign's cost; a campaign that volunteers visit has long been vacuumed.
        cursor.execute("VACUUM (ANALYZE)")
    return campaign, judged


def rows_read(plan: dict[str, Any], tables: set[str]) -> int:
    """Rows the plan's scans of ``tables`` produced or threw away, over all their loops."""
    scanned = plan.get("Relation Name") in tables
    own = (plan.get("Actual Rows", 0) + plan.get("Rows Removed by Filter", 0)) * plan.get("Actual Loops", 1)
    return int(own if scanned else 0) + sum(rows_read(child, tables) for child in plan.get("Plans", []))


def seq_scans(plan: dict[str, Any]) -> list[str]:
    own = [plan["Relation Name"]] if plan["Node Type"] == "Seq Scan" else []
    return own + [table for child in plan.get("Plans", []) for table in seq_scans(child)]


def visit(campaign: Any, figures: Figures | None) -> list[str]:
    """One volunteer's whole visit; ``figures`` None: every SELECT explained instead of timed."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    client = Client()
    token = ""
    flagged: list[str] = []
    large_tables: set[str] = set()
    if figures is None:
        with connection.cursor() as cursor:
            # Tables of a few hundred rows (the volunteers of a fresh database) are read whole
            # by a sequential scan, rightly: only the reads of large tables say something.
            cursor.execute(
                "SELECT relname FROM pg_class WHERE relkind = 'r' AND reltuples > %s", [SCANNED_ROWS_ALLOWED]
            )
            large_tables = {name for (name,) in cursor.fetchall()}

    def explain(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if not many and sql.lstrip().upper().startswith(("SELECT", "(SELECT")):
            with context["connection"].connection.cursor() as raw:
                raw.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
                plan = raw.fetchone()[0][0]["Plan"]
            grown = [table for table in seq_scans(plan) if table in large_tables and table in GROWING_TABLES]
            rows = rows_read(plan, large_tables)
            if grown or rows > ROWS_PER_STATEMENT:
                scans = f"Seq Scan on {', '.join(grown)}, " if grown else ""
                flagged.append(f"{scans}{rows} rows read: {' '.join(sql.split())[:150]}")
        return execute(sql, params, many, context)

    def call(method: str, path: str, data: dict[str, str] | None = None, kind: str = "") -> Any:
        label = f"{method.upper()} {kind or path.replace(campaign.slug, '<slug>').replace(token or '@', '<token>')}"
        if figures is None:
            before = len(flagged)
            with connection.execute_wrapper(explain):
                response = getattr(client, method)(path, data or {})
            flagged[before:] = [f"{label}: {line}" for line in flagged[before:]]
        else:
            # Django keeps the last 9,000 statements: a full log would count the statements wrongly.
            connection.queries_log.clear()
            web, pg = time.process_time(), backend_cpu_ms(pid)
            with CaptureQueriesContext(connection) as queries:
                response = getattr(client, method)(path, data or {})
            pg = backend_cpu_ms(pid) - pg
            web = (time.process_time() - web) * 1000
            if method == "get" and kind.endswith(")") and response.status_code == 302:  # the pair page sent elsewhere
                label = "GET /v/<token>/ (redirect)"
            figures.pg_ms[label].append(pg)
            figures.web_ms[label].append(web)
            figures.statements[label].append(len(queries))
            figures.went_first[label].append(figures.leading)
        if response.status_code not in (200, 302):
            raise SystemExit(f"{label} gave {response.status_code}")
        return response

    welcome = f"/c/{campaign.slug}/"
    call("get", welcome)
    token = call("post", welcome, {"consent": "on", "english_level": "good"}).url.split("/")[2]
    home = f"/v/{token}/"
    call("get", f"{home}guidelines/")
    call("post", f"{home}guidelines/")
    shown = 0
    for _ in range(8):
        item = {0: "training", 1: "check"}.get(shown, "campaign")
        response = call("get", home, kind=f"/v/<token>/ ({item})")
        if response.status_code == 302:
            if response.url.endswith("/training-done/"):
                call("get", response.url)
                call("post", response.url)
                continue
            call("get", response.url)
            break
        shown += 1
        found = PAIR_FIELD.search(response.content.decode())
        assert found is not None, "a pair page without its pair field"
        pair = found.group(1)
        answered = call(
            "post", f"{home}answer/", {"pair": pair, "label": "same_meaning"}, f"/v/<token>/answer/ ({item})"
        )
        if "/training/" in answered.url:
            call("get", answered.url, kind="/v/<token>/training/<pair>/")
    return flagged


STAFF_BUDGET_MS = 150  # web + PostgreSQL CPU of one staff request
STAFF_TIMEOUT_MS = 60_000  # a statement that runs longer fails the page instead of hanging the run


@dataclass(frozen=True)
class StaffView:
    """One staff request: its status, this process's CPU, the backend's CPU and its statements."""

    status: int
    web_ms: float
    pg_ms: float
    statements: int


STAFF_PAGES = (
    "home",
    "progress (dashboard data)",
    "volunteers",
    "pair list",
    "pair list by metric",
    "one pair",
    "status",
    "export start",
)


def staff_pages(campaign: Any, figures: Figures, only: set[str] | None = None) -> None:
    """Each staff page (of ``only``, when given) twice: first with an empty cache (what the first
    visit after a change pays), then again (what a reload pays while nothing changed)."""
    from django.core.cache import cache, caches
    from django.db import connection
    from django.db.utils import OperationalError
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotate.models import Pair
    from scoring.pipeline import configs

    client = Client()
    client.force_login(staff_user())
    metric = configs.enabled_configs()[0].pk
    pair = Pair.objects.filter(campaign=campaign, is_training=False, is_check=False).order_by("id")[0]
    slug = campaign.slug
    pages = {
        "home": "/staff/",
        "progress (dashboard data)": f"/staff/dashboard/data/?campaign={slug}",
        "volunteers": f"/staff/campaigns/{slug}/volunteers/",
        "pair list": f"/staff/campaigns/{slug}/pairs/",
        "pair list by metric": f"/staff/campaigns/{slug}/pairs/?metric={metric}",
        "one pair": f"/staff/campaigns/{slug}/pairs/{pair.pk}/",
        "status": "/staff/status/",
        "export start": f"/staff/export/{slug}/?level=pairs&format=csv",
    }
    assert tuple(pages) == STAFF_PAGES, "STAFF_PAGES names the pages measured here"
    if only is not None:
        pages = {name: path for name, path in pages.items() if name in only}
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
        cursor.execute(f"SET statement_timeout = {STAFF_TIMEOUT_MS}")
    client.get("/staff/status/")  # imports and the metric registry, not counted
    for name, path in pages.items():
        cache.clear()  # the kept verdicts and counts
        caches["analyses"].clear()  # the kept reports
        views = (
            ("first", "worker", "after worker", "worker again", "after worker again", "repeat")
            if path.startswith("/staff/dashboard/data/")
            else ("first", "repeat")
        )
        for view in views:
            connection.queries_log.clear()  # as for the volunteer requests
            if view.startswith("worker"):  # what the interactive worker pays, in this process (no request)
                web, pg = time.process_time(), backend_cpu_ms(pid)
                with CaptureQueriesContext(connection) as queries:
                    run_interactive_tasks()
                figures.staff[f"{name} ({view})"] = StaffView(
                    200, (time.process_time() - web) * 1000, backend_cpu_ms(pid) - pg, len(queries)
                )
                continue
            web, pg = time.process_time(), backend_cpu_ms(pid)
            try:
                with CaptureQueriesContext(connection) as queries:
                    response = client.get(path)
                    if response.streaming:
                        next(iter(response.streaming_content), b"")  # type: ignore[attr-defined]
                status = response.status_code
            except OperationalError:  # the statement timeout: the page would have hung
                status = 0
            figures.staff[f"{name} ({view})"] = StaffView(
                status,
                (time.process_time() - web) * 1000,
                backend_cpu_ms(pid) - pg,
                len(queries),
            )
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 0")


def run_interactive_tasks() -> int:
    """Run here, until none is left, the tasks the dashboard queued on the ``interactive`` queue
    (its report for a large campaign, then its intervals): what a worker does off the request
    path. The number run."""
    import base64
    import json

    from django.conf import settings

    from paraeval.celery import app
    from scoring.reports import tasks  # registers them

    assert tasks.compute_dashboard_report.name in app.tasks
    folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
    ran = 0
    for _ in range(10):
        # One message a file, named "<id>.<queue>.msg": only the interactive queue's.
        messages = sorted(folder.glob("*.interactive.*")) if folder.is_dir() else []
        if not messages:
            break
        for path in messages:
            payload = json.loads(path.read_text())
            path.unlink()
            app.tasks[payload["headers"]["task"]](**json.loads(base64.b64decode(payload["body"]))[1])
            ran += 1
    return ran


def staff_user() -> Any:
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(
        username="scale-staff", defaults={"is_staff": True, "is_superuser": True}
    )
    return user


def balanced_ratio(
    figures: list[float],
    reference: list[float],
    figures_first: list[bool],
    reference_first: list[bool],
    average: Callable[[list[float]], float],
) -> float:
    """A request's figure over the reference campaign's, free of the order the two were visited in.

    The visits alternate which campaign goes first, and going first or second can itself cost
    more (caches warmed by the other visit): averaged over both orders, each campaign's samples
    would mix two levels and their median land anywhere between. So the ratio is taken within
    each order (this campaign first against the reference second, and the reverse) and the two
    are combined by their geometric mean, which cancels a cost of going first that multiplies
    both campaigns' figures alike."""
    led = [value for value, first in zip(figures, figures_first, strict=True) if first]
    followed = [value for value, first in zip(figures, figures_first, strict=True) if not first]
    ref_led = [value for value, first in zip(reference, reference_first, strict=True) if first]
    ref_followed = [value for value, first in zip(reference, reference_first, strict=True) if not first]
    if not (led and followed and ref_led and ref_followed):  # one order only: the plain ratio
        return average(figures) / average(reference)
    return float((average(led) / average(ref_followed) * average(followed) / average(ref_led)) ** 0.5)


def report(size: int, figures: Figures, reference: Figures | None) -> None:
    print(f"\n{size:,} pairs, {figures.judgements:,} others' judgements:")
    for label in figures.web_ms:
        web = statistics.median(figures.web_ms[label])
        pg = backend_average(figures.pg_ms[label])
        count = statistics.median(figures.statements[label])
        line = f"  {label:<42} web {web:6.2f} ms  PostgreSQL {pg:5.1f} ms  statements {count:4.0f}"
        if reference is not None and label in reference.web_ms:
            ref_pg = backend_average(reference.pg_ms[label])
            ref_count = statistics.median(reference.statements[label])
            orders = (figures.went_first[label], reference.went_first[label])
            web_ratio = balanced_ratio(figures.web_ms[label], reference.web_ms[label], *orders, statistics.median)
            pg_ratio = balanced_ratio(figures.pg_ms[label], reference.pg_ms[label], *orders, backend_average)
            line += (
                f"  | ratio web {web_ratio:4.2f}  PostgreSQL "
                + (f"{pg_ratio:4.2f}" if ref_pg else "  - ")
                + f"  statements {count / ref_count:4.2f}"
            )
        print(line)
    if figures.staff:
        print(
            f"  staff pages (CPU of this process and of the backend; over {STAFF_BUDGET_MS} ms:"
            f" marked !; status 0: a statement ran past {STAFF_TIMEOUT_MS // 1000} s):"
        )
    for name, view in figures.staff.items():
        total = view.web_ms + view.pg_ms
        missed = total > STAFF_BUDGET_MS or view.status != 200
        line = (
            f"    {name:<38} [{view.status}] web {view.web_ms:7.1f} ms  PostgreSQL {view.pg_ms:7.1f} ms"
            f"  statements {view.statements:3d}  {'!' if missed and '(worker' not in name else ' '}"
        )
        if reference is not None and name in reference.staff:
            ref = reference.staff[name]
            ratio = total / max(ref.web_ms + ref.pg_ms, 1)
            line += f"  | ratio CPU {ratio:5.2f}  statements {view.statements / max(ref.statements, 1):4.2f}"
        print(line)
    if figures.web_ms:
        print(
            f"  volunteer statements that read over {ROWS_PER_STATEMENT} rows or scan a campaign table of over"
            f" {SCANNED_ROWS_ALLOWED:,} rows:"
            f" {len(figures.flagged)}"
        )
    for line in figures.flagged:
        print(f"    {line}")


def run(
    sizes: list[int], judgements: list[int], volunteers: int, scores: bool, staff: bool, pages: set[str] | None
) -> None:
    import logging

    import django

    django.setup()
    logging.getLogger("axes").setLevel(logging.WARNING)  # the staff login, once per campaign
    from django.conf import settings
    from django.core.management import call_command

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    call_command("migrate", verbosity=0)
    from scoring.pipeline import configs

    configs.build_enabled()
    print(
        f"volunteer visits per campaign: {volunteers} (median per request); "
        f"scores: {'every enabled metric' if scores else 'none'}; PostgreSQL CPU: the connection's backend"
        + (" (schedstat, median)" if PRECISE_BACKEND_CPU else " (clock ticks, mean)")
    )
    number = 0
    for others in judgements:
        reference: Figures | None = None
        first: Any = None
        for size in sizes:
            number += 1
            started = time.perf_counter()
            # Each campaign's warm-up, measured and explained visits; the first campaign's again
            # beside each later one.
            visits = volunteers + 2 + (volunteers * (len(sizes) - 1) if reference is None else 0)
            campaign, judged = build(size, others, scores, number, visits)
            figures = Figures(judgements=judged)
            built = time.perf_counter() - started
            # What the build left in this process (nothing a web worker would hold) is set aside,
            # so that no garbage collection during a visit walks it.
            gc.collect()
            gc.freeze()
            beside = Figures(judgements=reference.judgements, staff=reference.staff) if reference else None
            if volunteers:
                visit(campaign, Figures())  # warm-up visit, not counted
                for number_of_visit in range(volunteers):
                    if beside is None:
                        visit(campaign, figures)
                        continue
                    # The first campaign again, visit for visit: the ratio compares requests made
                    # in the same seconds, whatever else this machine is doing meanwhile. Which of
                    # the two goes first alternates, so that neither always follows the other.
                    pair = [(campaign, figures), (first, beside)]
                    for position, (visited, kept) in enumerate(pair if number_of_visit % 2 == 0 else reversed(pair)):
                        kept.leading = position == 0
                        visit(visited, kept)
                figures.flagged = visit(campaign, None)
            if staff:
                staff_pages(campaign, figures, pages)
            report(size, figures, beside or reference)
            print(f"  (built in {built:.0f} s, measured in {time.perf_counter() - started - built:.0f} s)")
            if reference is None:  # (the campaign stays: later ones have it beside them)
                reference, first = figures, campaign


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", required=True, help="postgres://…/name: a throwaway database (dropped after)")
    parser.add_argument("--keep", action="store_true", help="keep the database after, to look into its plans")
    parser.add_argument("--sizes", default="2000,100000,1000000", help="pool sizes, comma-separated")
    parser.add_argument("--judgements", default="0,300000", help="others' judgements, comma-separated")
    parser.add_argument("--volunteers", type=int, default=10, help="visits measured per campaign (0: staff pages only)")
    parser.add_argument("--no-scores", action="store_true", help="no metric scores (a faster build)")
    parser.add_argument("--no-staff", action="store_true", help="volunteer requests only, no staff page")
    parser.add_argument(
        "--pages",
        help=f"staff pages to measure, comma-separated (default: all of {', '.join(STAFF_PAGES)})",
    )
    options = parser.parse_args()
    pages = None if options.pages is None else {name.strip() for name in options.pages.split(",")}
    if pages is not None and not pages <= set(STAFF_PAGES):
        parser.error(f"unknown staff page(s): {', '.join(sorted(pages - set(STAFF_PAGES)))}")
    sizes = [int(value) for value in options.sizes.split(",")]
    judgements = [int(value) for value in options.judgements.split(",")]
    name = options.database.rsplit("/", 1)[1]
    with admin(options.database) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        with tempfile.TemporaryDirectory(prefix="scale-") as folder:
            configure(Path(folder) / "data", options.database)
            run(sizes, judgements, options.volunteers, not options.no_scores, not options.no_staff, pages)
    finally:
        from django.db import connections

        connections.close_all()
        if not options.keep:
            with admin(options.database) as connection:
                connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
