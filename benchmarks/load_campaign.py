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
    .venv/bin/python benchmarks/load_campaign.py --stress   # the saturation point: no think time
    .venv/bin/python benchmarks/load_campaign.py --volunteers 20 --quota 10   # a quick look

The scoring worker runs beside the server as scripts/run.sh starts it (SCHED_IDLE; see
``--worker-priority``).
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
        slug="load",
        name="Load test",
        quota=args.quota,
        judges_per_pair=args.judges,
        reservation_minutes=20,
        # Attention checks: check pairs among the campaign pairs and a crowd platform's identifiers.
        check_every=args.check_every or None,
        platform="prolific" if args.platform else "",
        completion_code="LOADPASS" if args.platform else "",
        screened_out_code="LOADSCRN" if args.platform else "",
    )
    if args.check_every:
        Pair.objects.bulk_create(
            [
                Pair(
                    campaign=campaign,
                    external_id=f"check-{n}",
                    source=f"The shop number {n} opens at nine.",
                    hypothesis=f"The shop number {n} opens at nine.",
                    is_check=True,
                    expected_label=Label.SAME_MEANING.value,
                )
                for n in range(1, args.quota // args.check_every + 1)
            ]
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
                conn.request("GET", "/c/load/?PROLIFIC_PID=probe")  # a platform campaign needs an id
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


class PostgresCpu(threading.Thread):
    """CPU of the PostgreSQL backends of one database, closed connections included.

    A backend's CPU vanishes from /proc when its connection closes, so its pid is sampled every
    0.2 s from ``pg_stat_activity`` and the last value seen is kept (at most 0.2 s of a closed
    backend's CPU is missed).
    """

    def __init__(self, database: str, admin_url: str) -> None:
        super().__init__(daemon=True)
        self.database, self.admin_url = database, admin_url
        self.seen: dict[int, float] = {}
        self.start_values: dict[int, float] = {}
        self.stopped = threading.Event()

    def sample(self, conn: psycopg.Connection) -> None:
        pids = [row[0] for row in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [self.database])]
        for pid in pids:
            value = process_cpu_seconds(pid)
            self.seen[pid] = max(value, self.seen.get(pid, 0.0))

    def run(self) -> None:
        with admin_connection(self.admin_url) as conn:
            self.sample(conn)
            self.start_values = dict(self.seen)
            while not self.stopped.wait(0.2):
                self.sample(conn)
            self.sample(conn)

    def stop(self) -> float:
        """Stop sampling; CPU seconds the database's backends used meanwhile."""
        self.stopped.set()
        self.join(timeout=10)
        return sum(value - self.start_values.get(pid, 0.0) for pid, value in self.seen.items())


def tree_cpu_seconds(pid: int) -> float:
    """CPU of a process and its children (gunicorn's master and workers, celery's pool)."""
    return process_cpu_seconds(pid) + sum(process_cpu_seconds(child) for child in children_of(pid))


# How the worker's CPU priority is lowered: "idle" is what scripts/run.sh does (Linux's
# SCHED_IDLE: the worker runs only on CPU time the pages leave), "nice10" what it did before.
WORKER_PRIORITIES = {"idle": ["chrt", "--idle", "0", "nice", "-n", "19"], "nice10": ["nice", "-n", "10"]}


def start_worker(env: dict[str, str], data_dir: Path, priority: str) -> subprocess.Popen:
    """The scoring worker exactly as scripts/run.sh starts it (one process, every queue, beat)."""
    from scoring.pipeline import configs

    log = (data_dir / "worker.log").open("ab")
    queues = ",".join(configs.all_queues())  # cpu, llm and llm.<model> per judge model (worker_queues)
    return subprocess.Popen(
        [*WORKER_PRIORITIES[priority],
         str(Path(sys.executable).parent / "celery"), "-A", "paraeval", "worker", "-Q", queues,
         "--concurrency", "1", "--beat", "--schedule", str(data_dir / "celerybeat-schedule"), "--loglevel", "INFO"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip


def wait_for_warm_worker(timeout: float) -> float:
    """Queue one probe pair and wait for all its scores (the worker has loaded every model)."""
    from annotate.models import Campaign, Pair
    from scoring.models import Score
    from scoring.pipeline import configs, dispatch

    campaign = Campaign.objects.create(slug="probe", name="Probe")
    probe = Pair.objects.create(campaign=campaign, source="The cat sat on the mat.", hypothesis="A cat sat on a mat.")
    wanted = len(configs.enabled())
    started = time.monotonic()
    dispatch.queue_missing([probe.pk])
    while Score.objects.filter(pair=probe).count() < wanted:
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"the worker did not score the probe pair within {timeout:.0f} s")
        time.sleep(1)
    return time.monotonic() - started


def score_delays(slug: str) -> tuple[list[float], int]:
    """Seconds from each answered pair's first judgement to its last score; pairs still lacking one."""
    from django.db.models import Count, Max, Min

    from annotate.models import Pair
    from scoring.pipeline import configs

    wanted = len(configs.enabled())
    rows = (
        Pair.objects.filter(campaign__slug=slug, is_training=False, judgements__isnull=False)
        .annotate(judged=Min("judgements__answered_at"), scored=Max("scores__computed_at"))
        .annotate(n=Count("scores", distinct=True))
        .values_list("judged", "scored", "n")
    )
    delays, missing = [], 0
    for judged, scored, n in rows:
        if n < wanted:
            missing += 1
        else:
            delays.append((scored - judged).total_seconds())
    return delays, missing


# --- The volunteers ----------------------------------------------------------------------------


COMPLETION_CODE = re.compile(rb'id="completion-code">([^<]+)<')


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
    codes: Counter[str] = field(default_factory=Counter)  # completion codes seen on end pages


class ConnectionReset(Exception):
    """The server closed or reset the connection under a request: counted as an error."""


class Browser:
    """A minimal HTTP client with cookies and one keep-alive connection.

    Like a browser, it opens a new connection when the old one has been idle longer than the
    server keeps it (gunicorn's keep-alive, 2 s); a connection closed or reset *under* a request
    is an error, never retried silently.
    """

    IDLE_SECONDS = 1.5  # below gunicorn's default --keep-alive 2

    def __init__(self, port: int, timeout: float, cookies: dict[str, str] | None = None) -> None:
        self.port = port
        self.timeout = timeout
        self.cookies: dict[str, str] = cookies if cookies is not None else {}
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.last_used = time.monotonic()

    def request(self, method: str, path: str, form: dict[str, str] | None = None) -> tuple[int, str, bytes, float]:
        body = urllib.parse.urlencode(form).encode() if form is not None else None
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if time.monotonic() - self.last_used > self.IDLE_SECONDS:
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        started = time.perf_counter()
        try:
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
            content = response.read()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as error:
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            raise ConnectionReset(f"{method} {type(error).__name__}") from error
        finally:
            self.last_used = time.monotonic()
        elapsed = (time.perf_counter() - started) * 1000
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
        return response.status, response.getheader("Location", ""), content, elapsed


def double_click(browser: Browser, path: str, form: dict[str, str]) -> list[tuple[int, str, bytes, float]]:
    """POST ``form`` twice at the same moment, on two connections (a true double click)."""
    second = Browser(browser.port, browser.timeout, cookies=dict(browser.cookies))
    barrier = threading.Barrier(2)
    results: list[tuple[int, str, bytes, float] | BaseException] = [None, None]  # type: ignore[list-item]

    def post(slot: int, client: Browser) -> None:
        barrier.wait()
        try:
            results[slot] = client.request("POST", path, form)
        except BaseException as error:  # noqa: BLE001 - re-raised by the caller
            results[slot] = error

    threads = [threading.Thread(target=post, args=(slot, client)) for slot, client in enumerate((browser, second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    second.conn.close()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results  # type: ignore[return-value]


def volunteer(number: int, port: int, slug: str, args: argparse.Namespace, stats: Stats, deadline: float) -> None:
    try:
        _volunteer(number, port, slug, args, stats, deadline)
    except ConnectionReset as error:
        with stats.lock:
            stats.errors[f"connection reset ({error})"] += 1
    except OSError as error:  # timeouts, refused connections
        with stats.lock:
            stats.errors[f"{type(error).__name__}"] += 1


def _volunteer(number: int, port: int, slug: str, args: argparse.Namespace, stats: Stats, deadline: float) -> None:
    rng = random.Random(number)
    browser = Browser(port, timeout=args.request_timeout)

    def fail(reason: str) -> None:
        with stats.lock:
            stats.errors[reason] += 1

    # A crowd platform's participant arrives with its identifiers in the link.
    platform_ids = (
        {"PROLIFIC_PID": f"{number:024x}", "STUDY_ID": "load-study", "SESSION_ID": f"s{number}"}
        if args.platform
        else {}
    )
    query = "?" + "&".join(f"{key}={value}" for key, value in platform_ids.items()) if platform_ids else ""
    status, _, body, _ = browser.request("GET", f"/c/{slug}/{query}")
    if status != 200:
        return fail(f"welcome {status}")
    token = CSRF_FIELD.search(body).group(1).decode()
    level = rng.choice(["poor", "good", "advanced", "native"])
    status, location, _, _ = browser.request(
        "POST",
        f"/c/{slug}/",
        {"csrfmiddlewaretoken": token, "consent": "on", "english_level": level, **platform_ids},
    )
    if status != 302 or not location.startswith("/v/"):
        return fail(f"start {status}")
    home = location
    while time.monotonic() < deadline:
        status, location, body, elapsed = browser.request("GET", home)
        if status == 302 and location.endswith(("/guidelines/", "/training-done/")):
            # The guidelines step before the training, the end-of-training page after it.
            step_status, _, step_body, _ = browser.request("GET", location)
            if step_status != 200:
                return fail(f"step page {step_status}")
            token = CSRF_FIELD.search(step_body).group(1).decode()
            step_status, _, _, _ = browser.request("POST", location, {"csrfmiddlewaretoken": token})
            if step_status != 302:
                return fail(f"step {step_status}")
            continue
        if status == 302 and location.endswith("/done/"):
            status, _, done_body, _ = browser.request("GET", location)
            if status == 200:
                with stats.lock:
                    stats.finished += 1
                    if args.platform:
                        found = COMPLETION_CODE.search(done_body)
                        stats.codes[found.group(1).decode() if found else "none"] += 1
            return None
        if status != 200:
            return fail(f"pair page {status}")
        with stats.lock:
            stats.page_ms.append(elapsed)
        pair_id = PAIR_FIELD.search(body).group(1).decode()
        token = CSRF_FIELD.search(body).group(1).decode()
        time.sleep(rng.uniform(args.think_min, args.think_max))
        form = {"csrfmiddlewaretoken": token, "pair": pair_id, "label": rng.choice(LABELS)}
        if rng.random() < args.replay_rate:
            # A double click: both POSTs in flight at once, on two connections.
            (status, location, _, elapsed), (replay_status, replay_location, _, replay_elapsed) = double_click(
                browser, f"{home}answer/", form
            )
            with stats.lock:
                stats.replays += 1
                stats.replay_ms.append(replay_elapsed)
            if replay_status != 302 or replay_location != location:
                fail(f"double click {replay_status} {replay_location} vs {status} {location}")
        else:
            status, location, _, elapsed = browser.request("POST", f"{home}answer/", form)
        if status != 302:
            return fail(f"answer {status}")
        with stats.lock:
            stats.answers += 1
            stats.answer_ms.append(elapsed)
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
    parser.add_argument("--check-every", type=int, default=0, help="a check pair after every N pairs (0: none)")
    parser.add_argument("--platform", action="store_true", help="a Prolific campaign: identifiers in the link")
    parser.add_argument("--judges", type=int, default=1, help="judges per pair (the campaign's target)")
    # Default pacing: 2-6 s to read two sentences and click, several times faster than the
    # 15 s per pair the welcome page announces; --stress drops the think time.
    parser.add_argument("--think-min", type=float, default=2.0, help="seconds before each answer (min)")
    parser.add_argument("--think-max", type=float, default=6.0, help="seconds before each answer (max)")
    parser.add_argument("--replay-rate", type=float, default=0.05, help="share of answers posted twice")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (scripts/run.sh: 2)")
    parser.add_argument("--threads", type=int, default=4, help="threads per worker (scripts/run.sh: 4)")
    parser.add_argument("--time-limit", type=float, default=600, help="seconds after which volunteers stop")
    parser.add_argument("--request-timeout", type=float, default=30)
    parser.add_argument("--warm-timeout", type=float, default=600, help="seconds for the worker's warm-up")
    parser.add_argument("--drain", type=float, default=120, help="seconds to wait for the last scores")
    parser.add_argument(
        "--worker-priority",
        choices=sorted(WORKER_PRIORITIES),
        default="idle",
        help="idle: SCHED_IDLE as scripts/run.sh starts the worker (default); nice10: niceness 10",
    )
    parser.add_argument(
        "--stress", action="store_true", help="saturation point: no think time (each volunteer answers at once)"
    )
    parser.add_argument(
        "--admin-url",
        default=os.environ.get("LOAD_ADMIN_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a PostgreSQL database to connect to while creating and dropping the throwaway one",
    )
    args = parser.parse_args()
    if args.stress:
        args.think_min = args.think_max = 0.0

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
    # The pool's pairs are created without queueing their scores (an import would queue them
    # long before the campaign): only the answers queue work, and the sweep waits an hour.
    env["PARAEVAL_SWEEP_SECONDS"] = "3600"
    # Every simulated volunteer starts from 127.0.0.1: lift the per-address start limit
    # (30 per 10 minutes by default), which would otherwise refuse all but the first 30.
    env["PARAEVAL_START_RATE"] = "1000000/1m"
    # WordNet (METEOR) as scripts/setup.sh installed it, not in the throwaway data folder.
    env.setdefault("NLTK_DATA", str(Path(os.environ.get("PARAEVAL_DATA_DIR", ROOT / "data")) / "nltk_data"))
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
    worker = start_worker(env, data_dir, args.worker_priority)
    warm = wait_for_warm_worker(args.warm_timeout)
    print(
        f"scoring worker started as scripts/run.sh does ({' '.join(WORKER_PRIORITIES[args.worker_priority])}); "
        f"warm (probe pair scored) after {warm:.0f} s",
        flush=True,
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
        web_before = tree_cpu_seconds(server.pid)
        worker_before = tree_cpu_seconds(worker.pid)
        postgres = PostgresCpu(database, args.admin_url)
        postgres.start()
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
        web_after = tree_cpu_seconds(server.pid)
        worker_after = tree_cpu_seconds(worker.pid)
        db_cpu = postgres.stop()
        client_cpu = time.process_time() - client_before
        # Give the worker a bounded time to score what was answered last.
        drain_until = time.monotonic() + args.drain
        while score_delays(slug)[1] and time.monotonic() < drain_until:
            time.sleep(2)
    finally:
        for process in (server, worker):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()

    from django.db.models import Count

    from annotate.models import Judgement, Pair

    judgements = Judgement.objects.filter(pair__campaign__slug=slug)
    stored = judgements.count()
    doubled = judgements.values("volunteer", "pair").annotate(n=Count("pk")).filter(n__gt=1).count()
    per_pair = Pair.objects.filter(campaign__slug=slug, is_training=False, is_check=False)
    per_pair = per_pair.annotate(n=Count("judgements"))
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
    delays, unscored = score_delays(slug)
    print(f"judgement -> last score ({len(delays)} pairs, the worker running meanwhile): "
          f"median {percentile(delays, 50):.1f} s, p95 {percentile(delays, 95):.1f} s, "
          f"max {max(delays, default=float('nan')):.1f} s; {unscored} answered pairs still unscored "
          f"{args.drain:.0f} s after the end; worker CPU {(worker_after - worker_before) / cycles * 1000:.0f} ms "
          f"per answer")  # fmt: skip
    print(f"CPU per answer (its POST and the next page): web {(web_after - web_before) / cycles * 1000:.1f} ms, "
          f"PostgreSQL {db_cpu / cycles * 1000:.1f} ms (closed connections included), "
          f"load client {client_cpu / cycles * 1000:.1f} ms")  # fmt: skip
    print(f"volunteers finished: {stats.finished}/{args.volunteers}; errors: {dict(stats.errors) or 'none'}")
    print(f"answers sent: {stats.answers}; judgements stored: {stored}; lost: {lost}; doubled: {doubled}; "
          f"pairs over target: {over_target}")  # fmt: skip
    if args.check_every or args.platform:
        checks = judgements.filter(is_check=True).count()
        print(f"check answers: {checks}; completion codes on end pages: {dict(stats.codes) or 'none'}")
    ok = lost == 0 and doubled == 0 and over_target == 0 and not stats.errors
    print("RESULT:", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
