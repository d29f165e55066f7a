"""Scripts that answer once then wait, against real volunteers; and a Prolific participant told "full".

Not a test: a script that prints what happens, against real server processes. It

1. creates two throwaway PostgreSQL databases with the same campaign (60 pairs, one judge per
   pair, a quota of 3), and starts gunicorn on each (ports ``--port`` and ``--port`` + 1):
   one with the settings as they are, one with ``PARAEVAL_RESERVATION_PACE_SECONDS`` at 10^9,
   which is the rule before (any past answer, however old, kept a reservation from yielding);
2. on both at once, over HTTP: ``--scripts`` scripts (30) start, answer one pair, open the
   next (reserved) and wait; real volunteers then arrive one every ``--every`` seconds (16 in
   all): each opens the link once, and if they are let in, judges up to the quota at a human
   pace (5 s a pair);
3. prints, every 15 s, the pairs reserved by the scripts on each server, then each real
   volunteer's arrival and outcome (told "full", or the pairs they judged);
4. replays the Prolific sequence on the first server: a participant reaches the end page with
   0 pairs (another holds the only place), the holder returns the study, the participant opens
   the link again, judges the pair and reaches the end page; it prints what each end page
   showed and the participant's row of ``participants.csv``.

Bounded: a fixed number of scripts and volunteers, a request timeout, and a deadline; the
databases are dropped at the end, whatever happens. Every client comes from 127.0.0.1, so the
per-address start limit is lifted on both servers (as in ``load_campaign.py``).

    .venv/bin/python benchmarks/campaign_holding.py
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_campaign import (  # noqa: E402 - the sibling benchmark's HTTP client and database helpers
    CSRF_FIELD,
    PAIR_FIELD,
    Browser,
    create_database,
    database_url,
    drop_database,
    sentence_pair,
)

COMPLETION_CODE = re.compile(rb'id="completion-code">([^<]+)<')
JUDGED = re.compile(rb"You judged <strong>(\d+) pairs?</strong>")
FULL_PAGE = b"This study is full"
CODE = "HOLD2026"
BEFORE_PACE_SECONDS = "1000000000"  # any answer since the start keeps a reservation: the rule before


@dataclass
class Arrival:
    at: float
    outcome: str = "not arrived"
    judged: int = 0


@dataclass
class Server:
    name: str
    database: str
    port: int
    data_dir: Path
    process: subprocess.Popen | None = None
    script_tokens: list[str] = field(default_factory=list)
    held: list[int] = field(default_factory=list)
    arrivals: list[Arrival] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def prepare(args: argparse.Namespace) -> None:
    """Migrate the first database and create both campaigns in it (Django in this process)."""
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from annotate.models import Campaign, Pair

    campaign = Campaign.objects.create(slug="held", name="Held", quota=3, judges_per_pair=1)
    Pair.objects.bulk_create(
        Pair(campaign=campaign, external_id=f"p{n}", source=source, hypothesis=hypothesis, origin="bench")
        for n in range(2 * args.scripts)
        for source, hypothesis in [sentence_pair(n)]
    )
    study = Campaign.objects.create(
        slug="study", name="Study", quota=1, judges_per_pair=1, platform="prolific", completion_code=CODE
    )
    source, hypothesis = sentence_pair(1000)
    Pair.objects.create(campaign=study, external_id="only", source=source, hypothesis=hypothesis, origin="bench")


def start_server(server: Server, env: dict[str, str]) -> None:
    log = (server.data_dir / "gunicorn.log").open("w+b")
    command = [
        str(Path(sys.executable).parent / "gunicorn"), "paraeval.wsgi",
        "--bind", f"127.0.0.1:{server.port}", "--workers", "2", "--threads", "4", "--worker-class", "gthread",
    ]  # fmt: skip
    server.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"gunicorn exited:\n{log.read().decode(errors='replace')}")
        try:
            if Browser(server.port, timeout=5).request("GET", "/c/held/")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"gunicorn did not answer on port {server.port} within 60 s")


def start(browser: Browser, url: str) -> tuple[str | None, bytes]:
    """Open the link and start: the volunteer's home path, or None and the page when refused."""
    status, _, body, _ = browser.request("GET", url)
    if status != 200 or FULL_PAGE in body:
        return None, body
    hidden = dict(re.findall(rb'<input type="hidden" name="(\w+)" value="([^"]*)">', body))
    form = {key.decode(): value.decode() for key, value in hidden.items()}
    form.update(consent="on", english_level="good")
    status, location, body, _ = browser.request("POST", url.split("?")[0], form)
    if status != 302 or not location.startswith("/v/"):
        return None, body
    page = browser.request("GET", f"{location}guidelines/")[2]
    browser.request(
        "POST", f"{location}guidelines/", {"csrfmiddlewaretoken": CSRF_FIELD.search(page).group(1).decode()}
    )
    return location, b""


def pair_page(browser: Browser, home: str) -> tuple[str, bytes]:
    """The volunteer's page: ("pair", html) or ("done", the end page)."""
    status, location, body, _ = browser.request("GET", home)
    if status == 302 and location.endswith("/done/"):
        return "done", browser.request("GET", location)[2]
    return ("pair", body) if PAIR_FIELD.search(body) else ("other", body)


def answer(browser: Browser, home: str, html: bytes) -> None:
    form = {
        "csrfmiddlewaretoken": CSRF_FIELD.search(html).group(1).decode(),
        "pair": PAIR_FIELD.search(html).group(1).decode(),
        "label": "mostly_similar",
    }
    browser.request("POST", f"{home}answer/", form)


def script(server: Server, args: argparse.Namespace) -> None:
    """Start, answer one pair, open the next (reserved for it) and wait forever."""
    browser = Browser(server.port, timeout=args.request_timeout)
    home, _ = start(browser, "/c/held/")
    if home is None:
        return
    kind, html = pair_page(browser, home)
    if kind == "pair":
        answer(browser, home, html)
        pair_page(browser, home)
    with server.lock:
        server.script_tokens.append(home.split("/")[2])


def person(server: Server, arrival: Arrival, args: argparse.Namespace, deadline: float) -> None:
    """A real volunteer: opens the link once; if let in, judges up to the quota at 5 s a pair."""
    browser = Browser(server.port, timeout=args.request_timeout)
    home, _ = start(browser, "/c/held/")
    if home is None:
        arrival.outcome = 'told "full"'
        return
    while time.monotonic() < deadline:
        kind, html = pair_page(browser, home)
        if kind != "pair":
            break
        time.sleep(args.think)
        answer(browser, home, html)
        arrival.judged += 1
    arrival.outcome = "served" if arrival.judged else "let in, no pair"


def held_by_scripts(server: Server, admin_url: str) -> int:
    with psycopg.connect(database_url(admin_url, server.database)) as conn:
        row = conn.execute(
            "SELECT COUNT(*) FROM annotate_assignment a JOIN annotate_volunteer v ON v.id = a.volunteer_id"
            " WHERE v.token = ANY(%s) AND a.answered_at IS NULL AND a.expires_at > now()",
            [server.script_tokens],
        ).fetchone()
    return int(row[0]) if row else 0


def bots_scenario(servers: list[Server], args: argparse.Namespace) -> None:
    started = time.monotonic()
    deadline = started + args.duration + 30
    threads = [
        threading.Thread(target=script, args=(server, args), daemon=True)
        for server in servers
        for _ in range(args.scripts)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=args.request_timeout * 6)
    print(
        f"{args.scripts} scripts started, answered one pair and opened the next in {time.monotonic() - started:.0f} s; "
        f"real volunteers arrive every {args.every:.0f} s from then on ({args.volunteers} in all)",
        flush=True,
    )
    t0 = time.monotonic()
    for server in servers:
        server.arrivals = [Arrival(at=args.every * (i + 1)) for i in range(args.volunteers)]
    people: list[threading.Thread] = []
    samples: list[tuple[float, list[int]]] = []
    next_sample = 0.0
    pending = [(arrival.at, server, arrival) for server in servers for arrival in server.arrivals]
    pending.sort(key=lambda item: item[0])
    while time.monotonic() - t0 <= args.duration:
        now = time.monotonic() - t0
        while pending and pending[0][0] <= now:
            _, server, arrival = pending.pop(0)
            thread = threading.Thread(target=person, args=(server, arrival, args, deadline), daemon=True)
            thread.start()
            people.append(thread)
        if now >= next_sample:
            samples.append((now, [held_by_scripts(server, args.admin_url) for server in servers]))
            next_sample += args.sample
        time.sleep(0.5)
    for thread in people:
        thread.join(timeout=max(1.0, deadline - time.monotonic()))
    print(f"\npairs reserved by the scripts (of {args.scripts} open), over time since the scripts settled")
    print(f"{'t (s)':>6}  " + "  ".join(f"{server.name:>28}" for server in servers))
    for moment, counts in samples:
        print(f"{moment:6.0f}  " + "  ".join(f"{count:>28}" for count in counts))
    print("\nreal volunteers: arrival (s) and outcome")
    print(f"{'at':>6}  " + "  ".join(f"{server.name:>28}" for server in servers))
    for index in range(args.volunteers):
        cells = [
            f"{a.outcome}{f', {a.judged} judged' if a.judged else ''}" for a in (s.arrivals[index] for s in servers)
        ]
        print(f"{servers[0].arrivals[index].at:6.0f}  " + "  ".join(f"{cell:>28}" for cell in cells))
    for server in servers:
        served = sum(a.judged > 0 for a in server.arrivals)
        judged = sum(a.judged for a in server.arrivals)
        print(f"{server.name}: {served} of {args.volunteers} real volunteers served, {judged} pairs judged by them")


def prolific_scenario(server: Server, args: argparse.Namespace) -> None:
    """The participant told "full" who works later: what the end pages show and what is recorded."""
    from annotate.models import Campaign
    from annotate.participants import csv_lines

    def link(pid: str) -> str:
        return f"/c/study/?PROLIFIC_PID={pid}&STUDY_ID=s1&SESSION_ID=sess-{pid}"

    participant, holder = Browser(server.port, args.request_timeout), Browser(server.port, args.request_timeout)
    late_home, _ = start(participant, link("late"))
    holder_home, _ = start(holder, link("holder"))
    assert late_home and holder_home, "the study refused a start while its place was free"
    assert pair_page(holder, holder_home)[0] == "pair"
    kind, first_end = pair_page(participant, late_home)
    print(f'\nProlific participant, {server.name}: end page at 0 pairs: "{kind}", {describe(first_end)}')
    confirm = holder.request("GET", f"{holder_home}return/")[2]
    token = CSRF_FIELD.search(confirm).group(1).decode()
    status, location, _, _ = holder.request("POST", f"{holder_home}return/", {"csrfmiddlewaretoken": token})
    assert status == 302 and location.endswith("/returned/"), f"return study: {status} {location}"
    participant.request("GET", link("late"))
    kind, html = pair_page(participant, late_home)
    print(f"the holder returned the study; the participant opens the link again: given a {kind}")
    if kind == "pair":
        time.sleep(args.think)  # reading time: the campaign's default rule flags answers under 2 s
        answer(participant, late_home, html)
    kind, end = pair_page(participant, late_home)
    print(f"after judging it, the end page: {describe(end)}")
    rows = csv.DictReader(io.StringIO("".join(csv_lines(Campaign.objects.get(slug="study")))))
    row = next(row for row in rows if row["participant_id"] == "late")
    columns = ("code_shown", "code_shown_text", "code_under_current_rule", "pairs_judged")
    print("participants.csv: " + ", ".join(f"{column}={row[column]}" for column in columns))


def describe(page: bytes) -> str:
    judged = JUDGED.search(page)
    code = COMPLETION_CODE.search(page)
    return (
        f"judged {judged.group(1).decode() if judged else '?'}, "
        + (f"code {code.group(1).decode()} shown" if code else "no code shown")
        + (' ("full" notice)' if b'data-completion="full"' in page else "")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scripts", type=int, default=30)
    parser.add_argument("--volunteers", type=int, default=16, help="real volunteers arriving")
    parser.add_argument("--every", type=float, default=15, help="seconds between real volunteers' arrivals")
    parser.add_argument("--think", type=float, default=5, help="a real volunteer's seconds per pair")
    parser.add_argument("--sample", type=float, default=15, help="seconds between samples of the scripts' holds")
    parser.add_argument("--port", type=int, default=18120, help="the first server's port (the second: +1)")
    parser.add_argument("--request-timeout", type=float, default=30)
    parser.add_argument(
        "--admin-url",
        default=os.environ.get("LOAD_ADMIN_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a PostgreSQL database to connect to while creating and dropping the throwaway ones",
    )
    args = parser.parse_args()
    args.duration = args.every * (args.volunteers + 1)
    suffix = f"{os.getpid()}_{secrets.token_hex(3)}"
    names = [f"paraeval_holding_now_{suffix}", f"paraeval_holding_before_{suffix}"]
    folders = [Path(tempfile.mkdtemp(prefix="paraeval-holding-")) for _ in names]
    base = {
        **os.environ,
        "SECRET_KEY": secrets.token_urlsafe(40),
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SETTINGS_MODULE": "paraeval.settings",
        "LOG_LEVEL": "WARNING",
        "PARAEVAL_START_RATE": "1000000/1m",  # every client is 127.0.0.1
        "PARAEVAL_SWEEP_SECONDS": "3600",
    }
    base.pop("REDIS_URL", None)
    base.setdefault("NLTK_DATA", str(ROOT / "data" / "nltk_data"))
    envs = [
        {**base, "DATABASE_URL": database_url(args.admin_url, name), "PARAEVAL_DATA_DIR": str(folder)}
        for name, folder in zip(names, folders, strict=True)
    ]
    envs[1]["PARAEVAL_RESERVATION_PACE_SECONDS"] = BEFORE_PACE_SECONDS
    os.environ.update(envs[0])
    sys.path.insert(0, str(ROOT))
    servers = [
        Server(
            f"now (pace window {os.environ.get('PARAEVAL_RESERVATION_PACE_SECONDS', '120')} s)",
            names[0],
            args.port,
            folders[0],
        ),
        Server("before (any answer holds)", names[1], args.port + 1, folders[1]),
    ]
    create_database(args.admin_url, names[0])
    try:
        prepare(args)
        from django.db import connections

        connections.close_all()
        with psycopg.connect(args.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{names[1]}" TEMPLATE "{names[0]}"')
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=envs[0], check=True
        )
        shutil.copytree(folders[0] / "staticfiles", folders[1] / "staticfiles")
        for server, env in zip(servers, envs, strict=True):
            start_server(server, env)
        from django.conf import settings

        print(
            f"gunicorn (2 workers x 4 threads) on 127.0.0.1:{args.port} and :{args.port + 1}, PostgreSQL; "
            f"grace {settings.PARAEVAL_RESERVATION_GRACE_SECONDS} s, pace window "
            f"{settings.PARAEVAL_RESERVATION_PACE_SECONDS} s (before: {BEFORE_PACE_SECONDS} s, i.e. any answer), "
            f"reservation {settings.PARAEVAL_RESERVATION_MINUTES} min; {2 * args.scripts} pairs, 1 judge each, "
            f"quota 3; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        bots_scenario(servers, args)
        prolific_scenario(servers[0], args)
        return 0
    finally:
        for server in servers:
            if server.process is not None:
                server.process.send_signal(signal.SIGTERM)
                try:
                    server.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    server.process.kill()
        from django.db import connections

        connections.close_all()
        for name in names:
            drop_database(args.admin_url, name)
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
