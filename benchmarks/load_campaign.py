"""Load test of the volunteer flow: gunicorn on PostgreSQL, many simulated volunteers over HTTP.

Not a test: a script that prints figures. It

1. creates a throwaway PostgreSQL database (dropped at the end, whatever happens),
2. migrates it and creates a campaign (training pairs + enough campaign pairs for everyone),
3. starts gunicorn on 127.0.0.1 and a free port, as scripts/run.sh does (gthread workers),
4. drives N concurrent volunteers (threads, one keep-alive ``http.client`` connection each)
   through the whole campaign: welcome page, consent, every training pair and its feedback,
   every campaign pair up to the quota, the end page. Each answer comes after a "think
   time"; a share of the answers is posted twice at once (a double click),
5. stops gunicorn and prints the latency of the answer POST (p50/p95/p99), of the pair page,
   and the number of stored judgements, which must equal the answers sent (0 lost, 0 doubled),
   with no pair judged beyond its target.

Bounded: a fixed number of volunteers and pairs, and a time limit after which the volunteers
stop. Run it on an idle machine for figures worth quoting:

    .venv/bin/python benchmarks/load_campaign.py            # 100 volunteers x (5 + 50) pairs
    .venv/bin/python benchmarks/load_campaign.py --think-min 0.5 --think-max 1.5   # stress
    .venv/bin/python benchmarks/load_campaign.py --volunteers 20 --quota 10   # a quick look
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
LABELS = ["very_different", "slightly_similar", "mostly_similar", "same_meaning", "dont_know"]
PAIR_FIELD = re.compile(rb'name="pair" value="(\d+)"')
CSRF_FIELD = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')

SUBJECTS = [
    "The committee",
    "A spokesman for the company",
    "The old fisherman",
    "Our neighbour's daughter",
    "The city council",
    "Most of the students",
    "The new manager",
    "A small group of tourists",
]
VERBS = [
    ("approved", "rejected"),
    ("praised", "criticised"),
    ("bought", "sold"),
    ("visited", "left"),
    ("announced", "postponed"),
    ("repaired", "damaged"),
]
OBJECTS = [
    "the budget for next year",
    "the harbour near the station",
    "three houses on Main Street",
    "the museum in the morning",
    "the plan after a long debate",
    "the bridge over the river",
]
TAILS = [
    "on Friday.",
    "last week, according to local reports.",
    "despite the rain.",
    "before the end of the month.",
    "without telling anyone.",
    "for the second time this year.",
]


def sentence_pair(number: int) -> tuple[str, str]:
    """A realistic pair: a paraphrase, a changed verb, a word swap or a partial overlap."""
    rng = random.Random(number)
    subject, (verb, other_verb), obj, tail = (
        rng.choice(SUBJECTS),
        rng.choice(VERBS),
        rng.choice(OBJECTS),
        rng.choice(TAILS),
    )
    source = f"{subject} {verb} {obj} {tail}"
    kind = number % 4
    if kind == 0:
        hypothesis = f"{tail[:-1].capitalize()}, {subject[0].lower()}{subject[1:]} {verb} {obj}."
    elif kind == 1:
        hypothesis = f"{subject} {other_verb} {obj} {tail}"
    elif kind == 2:
        hypothesis = f"{obj[0].upper()}{obj[1:]} {verb} {subject[0].lower()}{subject[1:]} {tail}"
    else:
        hypothesis = f"{subject} {verb} {rng.choice(OBJECTS)} {rng.choice(TAILS)}"
    return f"{source} (#{number})", hypothesis


# --- The server side: database, data, gunicorn -----------------------------------------------


def admin_connection(admin_url: str) -> psycopg.Connection:
    return psycopg.connect(admin_url, autocommit=True)


def create_database(admin_url: str, name: str) -> None:
    with admin_connection(admin_url) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(admin_url: str, name: str) -> None:
    with admin_connection(admin_url) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def database_url(admin_url: str, name: str) -> str:
    parts = urllib.parse.urlsplit(admin_url)
    return urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))


def prepare_campaign(args: argparse.Namespace) -> tuple[str, int]:
    """Create the campaign in the throwaway database (this process uses Django directly)."""
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from annotate.labels import Label
    from annotate.models import Campaign, Pair

    campaign = Campaign.objects.create(
        slug="load", name="Load test", quota=args.quota, judges_per_pair=args.judges, reservation_minutes=20
    )
    labels = list(Label)
    Pair.objects.bulk_create(
        [
            Pair(
                campaign=campaign,
                external_id=f"training-{position}",
                source=f"The cat drinks water number {position}.",
                hypothesis=f"The cat quenches its thirst {position}.",
                is_training=True,
                training_position=position,
                expected_label=labels[(position - 1) % len(labels)].value,
                explanation="An explanation of the expected answer.",
            )
            for position in range(1, args.training + 1)
        ]
    )
    pool = -(-args.volunteers * args.quota // args.judges)  # every volunteer can reach the quota
    Pair.objects.bulk_create(
        [
            Pair(campaign=campaign, external_id=f"p{n}", source=source, hypothesis=hypothesis, origin="load")
            for n in range(pool)
            for source, hypothesis in [sentence_pair(n)]
        ],
        batch_size=1000,
    )
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return campaign.slug, pool


def start_gunicorn(args: argparse.Namespace, env: dict[str, str], log_path: Path) -> tuple[subprocess.Popen, int]:
    """Start gunicorn on 127.0.0.1 and a port the OS picks; return once it answers."""
    log = open(log_path, "w+b")  # noqa: SIM115 - lives as long as the server
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "paraeval.wsgi",
        "--bind", "127.0.0.1:0",
        "--workers", str(args.workers),
        "--threads", str(args.threads),
        "--worker-class", "gthread",
        "--keep-alive", "5",
        "--error-logfile", "-",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    port = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"gunicorn exited:\n{log.read().decode(errors='replace')}")
        if port is None:
            log.seek(0)
            found = re.search(rb"Listening at: http://127\.0\.0\.1:(\d+)", log.read())
            port = int(found.group(1)) if found else None
        if port is not None:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/c/load/")
                if conn.getresponse().status == 200:
                    return process, port
            except OSError:
                pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("gunicorn did not start within 60 s")


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process (Linux /proc), 0 if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError):
            continue
    return found


def server_cpu_seconds(server_pid: int, database: str, admin_url: str) -> tuple[float, float]:
    """CPU time so far of gunicorn (master + workers) and of the PostgreSQL backends of ``database``."""
    web = process_cpu_seconds(server_pid) + sum(process_cpu_seconds(pid) for pid in children_of(server_pid))
    with admin_connection(admin_url) as conn:
        pids = [row[0] for row in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [database])]
    return web, sum(process_cpu_seconds(pid) for pid in pids)


# --- The volunteers ----------------------------------------------------------------------------


@dataclass
class Stats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    answer_ms: list[float] = field(default_factory=list)  # first copies only
    replay_ms: list[float] = field(default_factory=list)
    page_ms: list[float] = field(default_factory=list)
    answers: int = 0  # distinct (volunteer, pair) answers confirmed by a redirect
    replays: int = 0  # second copies of an answer (double clicks)
    finished: int = 0
    errors: Counter[str] = field(default_factory=Counter)


class Browser:
    """A minimal HTTP client with cookies and one keep-alive connection."""

    def __init__(self, port: int, timeout: float) -> None:
        self.port = port
        self.timeout = timeout
        self.cookies: dict[str, str] = {}
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def request(self, method: str, path: str, form: dict[str, str] | None = None) -> tuple[int, str, bytes, float]:
        body = urllib.parse.urlencode(form).encode() if form is not None else None
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        for attempt in (1, 2):
            started = time.perf_counter()
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                content = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed an idle keep-alive connection: reconnect once. Re-sending
                # a POST is safe: answers are idempotent (and the count below checks it).
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
                if attempt == 2:
                    raise
                continue
            elapsed = (time.perf_counter() - started) * 1000
            for header, value in response.getheaders():
                if header.lower() == "set-cookie":
                    name, _, rest = value.partition("=")
                    self.cookies[name.strip()] = rest.split(";", 1)[0]
            return response.status, response.getheader("Location", ""), content, elapsed
        raise AssertionError("unreachable")


def volunteer(number: int, port: int, slug: str, args: argparse.Namespace, stats: Stats, deadline: float) -> None:
    rng = random.Random(number)
    browser = Browser(port, timeout=args.request_timeout)

    def fail(reason: str) -> None:
        with stats.lock:
            stats.errors[reason] += 1

    status, _, body, _ = browser.request("GET", f"/c/{slug}/")
    if status != 200:
        return fail(f"welcome {status}")
    token = CSRF_FIELD.search(body).group(1).decode()
    level = rng.choice(["poor", "good", "advanced", "native"])
    status, location, _, _ = browser.request(
        "POST", f"/c/{slug}/", {"csrfmiddlewaretoken": token, "consent": "on", "english_level": level}
    )
    if status != 302 or not location.startswith("/v/"):
        return fail(f"start {status}")
    home = location
    while time.monotonic() < deadline:
        status, location, body, elapsed = browser.request("GET", home)
        if status == 302 and location.endswith("/done/"):
            status, _, _, _ = browser.request("GET", location)
            if status == 200:
                with stats.lock:
                    stats.finished += 1
            return None
        if status != 200:
            return fail(f"pair page {status}")
        with stats.lock:
            stats.page_ms.append(elapsed)
        pair_id = PAIR_FIELD.search(body).group(1).decode()
        token = CSRF_FIELD.search(body).group(1).decode()
        time.sleep(rng.uniform(args.think_min, args.think_max))
        form = {"csrfmiddlewaretoken": token, "pair": pair_id, "label": rng.choice(LABELS)}
        status, location, _, elapsed = browser.request("POST", f"{home}answer/", form)
        if status != 302:
            return fail(f"answer {status}")
        with stats.lock:
            stats.answers += 1
            stats.answer_ms.append(elapsed)
        if rng.random() < args.replay_rate:
            replay_status, replay_location, _, elapsed = browser.request("POST", f"{home}answer/", form)
            with stats.lock:
                stats.replays += 1
                stats.replay_ms.append(elapsed)
            if replay_status != 302 or replay_location != location:
                fail(f"replay {replay_status}")
        if "/training/" in location:
            status, _, _, _ = browser.request("GET", location)
            if status != 200:
                return fail(f"feedback {status}")
    return fail("time limit")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--volunteers", type=int, default=100)
    parser.add_argument("--quota", type=int, default=50, help="campaign pairs per volunteer")
    parser.add_argument("--training", type=int, default=5)
    parser.add_argument("--judges", type=int, default=1, help="judges per pair (the campaign's target)")
    # Default pacing: 2-6 s to read two sentences and click, several times faster than the
    # 15 s per pair the welcome page announces; --think-min 0.5 --think-max 1.5 is a stress run.
    parser.add_argument("--think-min", type=float, default=2.0, help="seconds before each answer (min)")
    parser.add_argument("--think-max", type=float, default=6.0, help="seconds before each answer (max)")
    parser.add_argument("--replay-rate", type=float, default=0.05, help="share of answers posted twice")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (scripts/run.sh: 2)")
    parser.add_argument("--threads", type=int, default=4, help="threads per worker (scripts/run.sh: 4)")
    parser.add_argument("--time-limit", type=float, default=600, help="seconds after which volunteers stop")
    parser.add_argument("--request-timeout", type=float, default=30)
    parser.add_argument(
        "--admin-url",
        default=os.environ.get("LOAD_ADMIN_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a PostgreSQL database to connect to while creating and dropping the throwaway one",
    )
    args = parser.parse_args()

    name = f"paraeval_load_{os.getpid()}_{secrets.token_hex(3)}"
    data_dir = Path(tempfile.mkdtemp(prefix="paraeval-load-"))
    env = {
        **os.environ,
        "DATABASE_URL": database_url(args.admin_url, name),
        "PARAEVAL_DATA_DIR": str(data_dir),
        "SECRET_KEY": secrets.token_urlsafe(40),
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SETTINGS_MODULE": "paraeval.settings",
        "LOG_LEVEL": "WARNING",
    }
    env.pop("REDIS_URL", None)  # the embedded broker, as scripts/run.sh uses by default
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    create_database(args.admin_url, name)
    try:
        return run(args, env, data_dir, name)
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(args.admin_url, name)
        shutil.rmtree(data_dir, ignore_errors=True)


def run(args: argparse.Namespace, env: dict[str, str], data_dir: Path, database: str) -> int:
    """Prepare, serve, drive the volunteers, and report; the caller cleans up."""
    from django.conf import settings
    from django.db import connections

    slug, pool = prepare_campaign(args)
    connections.close_all()
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    server, port = start_gunicorn(args, env, data_dir / "gunicorn.log")
    try:
        print(
            f"campaign: {args.training} training + {args.quota} pairs per volunteer, {pool} pairs in the pool, "
            f"{args.judges} judge(s) per pair; gunicorn {args.workers} workers x {args.threads} threads "
            f"(gthread) on 127.0.0.1:{port}, PostgreSQL; {os.cpu_count()} CPUs, load average before "
            f"{os.getloadavg()[0]:.2f}",
            flush=True,
        )
        print(
            f"{args.volunteers} volunteers, think time {args.think_min}-{args.think_max} s per answer, "
            f"{args.replay_rate:.0%} of answers posted twice, time limit {args.time_limit:.0f} s; each answer "
            f"queues the scores of {len(settings.PARAEVAL_METRICS)} metrics (PARAEVAL_METRICS) after commit",
            flush=True,
        )
        stats = Stats()
        web_before, db_before = server_cpu_seconds(server.pid, database, args.admin_url)
        client_before = time.process_time()
        deadline = time.monotonic() + args.time_limit
        started = time.monotonic()
        threads = [
            threading.Thread(target=volunteer, args=(n, port, slug, args, stats, deadline), daemon=True)
            for n in range(args.volunteers)
        ]
        for thread in threads:
            thread.start()
            time.sleep(0.01)  # arrivals spread over a second, not one burst
        for thread in threads:
            thread.join(timeout=max(1.0, deadline - time.monotonic() + args.request_timeout + 5))
        wall = time.monotonic() - started
        web_after, db_after = server_cpu_seconds(server.pid, database, args.admin_url)
        client_cpu = time.process_time() - client_before
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()

    from django.db.models import Count

    from annotate.models import Judgement, Pair

    judgements = Judgement.objects.filter(pair__campaign__slug=slug)
    stored = judgements.count()
    doubled = judgements.values("volunteer", "pair").annotate(n=Count("pk")).filter(n__gt=1).count()
    per_pair = Pair.objects.filter(campaign__slug=slug, is_training=False).annotate(n=Count("judgements"))
    over_target = per_pair.filter(n__gt=args.judges).count()
    answers = stats.answer_ms
    lost = stats.answers - stored
    print(f"wall time {wall:.1f} s, {len(answers)} answers (+ {stats.replays} replayed POSTs), "
          f"{len(answers) / wall:.1f} answers/s, load average after {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"answer POST latency: p50 {percentile(answers, 50):.1f} ms, p95 {percentile(answers, 95):.1f} ms, "
          f"p99 {percentile(answers, 99):.1f} ms, max {max(answers, default=float('nan')):.1f} ms")  # fmt: skip
    print(f"replayed POST:       p50 {percentile(stats.replay_ms, 50):.1f} ms, "
          f"p95 {percentile(stats.replay_ms, 95):.1f} ms")  # fmt: skip
    print(f"pair page latency:   p50 {percentile(stats.page_ms, 50):.1f} ms, "
          f"p95 {percentile(stats.page_ms, 95):.1f} ms")  # fmt: skip
    cycles = max(1, len(answers))
    print(f"CPU per answer (its POST and the next page): web {(web_after - web_before) / cycles * 1000:.1f} ms, "
          f"PostgreSQL {(db_after - db_before) / cycles * 1000:.1f} ms, "
          f"load client {client_cpu / cycles * 1000:.1f} ms")  # fmt: skip
    print(f"volunteers finished: {stats.finished}/{args.volunteers}; errors: {dict(stats.errors) or 'none'}")
    print(f"answers sent: {stats.answers}; judgements stored: {stored}; lost: {lost}; doubled: {doubled}; "
          f"pairs over target: {over_target}")  # fmt: skip
    ok = lost == 0 and doubled == 0 and over_target == 0 and not stats.errors
    print("RESULT:", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
