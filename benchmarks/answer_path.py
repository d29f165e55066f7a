"""CPU of one volunteer answer, in-process: the POST as a browser sends it, profiled.

Not a test: a script that prints figures. In this process it

1. creates a throwaway database (the embedded SQLite file in a fresh data folder, or with
   ``--database postgres://…/name`` a PostgreSQL database of that name, dropped at the end) and
   the embedded filesystem broker in the same folder, every metric of the default
   ``PARAEVAL_METRICS`` enabled (eleven);
2. creates, per scenario, a campaign of plain pairs and volunteers who have read the guidelines;
3. for each volunteer, GETs the pair page (which sets the CSRF cookie and holds the form's
   token) and POSTs the answer with Django's test client **with CSRF checks on**
   (``Client(enforce_csrf_checks=True)``), timing only the POST: CPU time of this process
   (``time.process_time``) and wall time;
4. does so in three scenarios, each on its own pairs, **interleaved** answer by answer
   (round-robin, after a warm-up), so that a drift of the machine's load touches them alike:

   * ``reference``: the scoring receiver disconnected (the judgement alone: what an answer
     costs before anything is queued);
   * ``unscored``: the pairs have no score yet, so each answer queues its pair's scores;
   * ``scored``: every pair already has every score, so nothing may be queued;

   and counts the messages each answer left on the broker (then empties it);
5. prints, per scenario, the median and mean CPU ms per answer, the wall p50/p95, the ratio to
   the reference and the messages per answer; ``--profile`` adds the functions that took the
   most CPU in the ``unscored`` scenario (cProfile, cumulative).

    .venv/bin/python benchmarks/answer_path.py                        # SQLite, 150 answers each
    .venv/bin/python benchmarks/answer_path.py --database postgres://postgres@127.0.0.1:5432/bench_answer
    .venv/bin/python benchmarks/answer_path.py --answers 50 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAIR_FIELD = re.compile(r'name="pair" value="(\d+)"')
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
ANSWERS_PER_VOLUNTEER = 10
DISPATCH_UID = "scoring.pipeline.dispatch.on_judgement_recorded"


@dataclass
class Scenario:
    name: str
    cpu_ms: list[float]
    wall_ms: list[float]
    messages: int

    def line(self, reference: float | None) -> str:
        median = statistics.median(self.cpu_ms)
        ratio = f"{median / reference:5.2f}x" if reference else "   1x "
        wall = sorted(self.wall_ms)
        p95 = wall[min(len(wall) - 1, round(0.95 * (len(wall) - 1)))]
        return (
            f"  {self.name:<10} CPU median {median:6.2f} ms  mean {statistics.fmean(self.cpu_ms):6.2f} ms  "
            f"wall p50 {statistics.median(wall):6.2f} ms  p95 {p95:6.2f} ms  ({ratio} the reference)  "
            f"messages queued per answer: {self.messages / len(self.cpu_ms):.2f}"
        )


def configure(data_dir: Path, database: str | None) -> None:
    """Environment of the embedded default (or PostgreSQL), before Django starts."""
    os.environ.update(
        DJANGO_SETTINGS_MODULE="paraeval.settings",
        PARAEVAL_DATA_DIR=str(data_dir),
        SECRET_KEY="answer-path-benchmark-key",
        ALLOWED_HOSTS="testserver",
    )
    for name in ("REDIS_URL", "PARAEVAL_METRICS", "DEBUG"):
        os.environ.pop(name, None)
    if database:
        os.environ["DATABASE_URL"] = database
    else:
        os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(ROOT))
    # WhiteNoise warns once per request handler when the collected static folder is missing.
    (data_dir / "staticfiles").mkdir(parents=True, exist_ok=True)


def create_database(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')


def drop_database(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run(answers: int, profile: bool) -> None:
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.utils import timezone

    from annotate import flow
    from annotate.models import Campaign, Pair
    from annotate.signals import judgement_recorded
    from scoring.models import Score
    from scoring.pipeline import configs, dispatch

    # Plain static files: the pair page is rendered without collectstatic's manifest.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    call_command("migrate", verbosity=0)
    queue = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
    metrics, unavailable = configs.build_enabled()
    print(
        f"database: {connection.vendor}; broker: {settings.CELERY_BROKER_URL}; {len(metrics)} metrics enabled"
        + (f" ({len(unavailable)} unavailable: {', '.join(m.name for m in unavailable)})" if unavailable else "")
    )

    @dataclass
    class Arm:
        """One scenario: its own campaign (so its volunteers are served its own pairs), its
        current volunteer, and its figures."""

        scenario: Scenario
        campaign: Campaign
        profiler: cProfile.Profile | None = None
        client: Client | None = None
        token: str = ""
        answered_by_volunteer: int = 0

    def arm(name: str, scored: bool, profiler: cProfile.Profile | None = None) -> Arm:
        campaign = Campaign.objects.create(
            slug=name, name=name, quota=ANSWERS_PER_VOLUNTEER, judges_per_pair=1, reservation_minutes=30
        )
        # bulk_create sends no signal: nothing is queued for these pairs by their creation.
        pairs = Pair.objects.bulk_create(
            Pair(
                campaign=campaign,
                external_id=f"{name}-{index}",
                source=f"The committee number {index} approved the {name} budget on Friday.",
                hypothesis=f"On Friday committee {index} passed the {name} budget.",
                origin="bench",
            )
            for index in range(-(-answers // ANSWERS_PER_VOLUNTEER) * ANSWERS_PER_VOLUNTEER)
        )
        if scored:
            rows = configs.enabled_configs()
            now = timezone.now()
            Score.objects.bulk_create(
                Score(pair_id=pair.pk, metric_config=row, value=0.5, computed_at=now) for pair in pairs for row in rows
            )
        return Arm(Scenario(name, [], [], 0), campaign, profiler)

    def answer(arm: Arm) -> None:
        """GET the pair page, time the POST of its answer, count the messages it left."""
        if arm.client is None or arm.answered_by_volunteer >= ANSWERS_PER_VOLUNTEER:
            volunteer = flow.start_volunteer(arm.campaign, english_level="good", consented=True)
            now = timezone.now()
            type(volunteer).objects.filter(pk=volunteer.pk).update(guidelines_seen_at=now, training_done_seen_at=now)
            arm.client, arm.token, arm.answered_by_volunteer = Client(enforce_csrf_checks=True), volunteer.token, 0
        # The reference answers with the scoring receiver disconnected (switched outside the timing).
        if arm.scenario.name == "reference":
            judgement_recorded.disconnect(dispatch_uid=DISPATCH_UID)
        else:
            dispatch.connect_receivers()
        page = arm.client.get(f"/v/{arm.token}/")
        if page.status_code != 200:
            raise SystemExit(f"pair page gave {page.status_code}")
        html = page.content.decode()
        pair_id = PAIR_FIELD.search(html).group(1)
        token = CSRF_FIELD.search(html).group(1)
        data = {"pair": pair_id, "label": "same_meaning", "csrfmiddlewaretoken": token}
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        if arm.profiler:
            arm.profiler.enable()
        response = arm.client.post(f"/v/{arm.token}/answer/", data)
        if arm.profiler:
            arm.profiler.disable()
        arm.scenario.cpu_ms.append((time.process_time() - cpu_start) * 1000)
        arm.scenario.wall_ms.append((time.perf_counter() - wall_start) * 1000)
        if response.status_code != 302:
            raise SystemExit(f"answer POST gave {response.status_code}: {response.content[:300]!r}")
        arm.answered_by_volunteer += 1
        # What this answer queued (the folder is emptied after each answer, outside the timing).
        for path in queue.glob("*.msg"):  # (the transport creates the folder on its first send)
            arm.scenario.messages += 1
            path.unlink()

    profiler = cProfile.Profile() if profile else None
    arms = [arm("warm-up", scored=False), arm("reference", scored=False)]
    arms += [arm("unscored", scored=False, profiler=profiler), arm("scored", scored=True)]
    # Warm-up: the first requests import modules and fill caches; not counted. Then answer by
    # answer, round-robin: a drift of the machine's load touches every scenario alike.
    for _ in range(min(answers, 3 * ANSWERS_PER_VOLUNTEER)):
        answer(arms[0])
    for _ in range(answers):
        for each in arms[1:]:
            answer(each)
    reference, unscored, scored = (each.scenario for each in arms[1:])

    base = statistics.median(reference.cpu_ms)
    print(f"answer POST, {answers} answers per scenario, interleaved (CSRF checks on), CPU of this process:")
    print(reference.line(None))
    print(unscored.line(base))
    print(scored.line(base))
    print(
        f"queueing the scores costs {statistics.median(unscored.cpu_ms) - base:.2f} ms of CPU per answer; "
        f"an already scored pair {statistics.median(scored.cpu_ms) - base:.2f} ms"
    )
    if profiler:
        print("\nunscored scenario, top functions by cumulative time:")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=150, help="answers timed per scenario")
    parser.add_argument("--database", help="postgres://…/name: a throwaway PostgreSQL database (dropped after)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the unscored scenario")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="answer-path-") as folder:
        configure(Path(folder) / "data", options.database)
        if options.database:
            create_database(options.database)
        try:
            run(options.answers, options.profile)
        finally:
            if options.database:
                from django.db import connections

                connections.close_all()
                drop_database(options.database)


if __name__ == "__main__":
    main()
