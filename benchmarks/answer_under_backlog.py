"""Answered pairs scored first: the delay from an answer to its pair's last score, with and without
an import's backlog in the queue, on the embedded default (SQLite, the filesystem broker, one
worker process started as ``scripts/run.sh`` starts it).

Not a test: a script that prints figures.

1. A fresh data folder, migrated; ``--backlog`` pairs imported into one campaign and ``--answers``
   more in another, none queued yet; the worker started (every queue, ``--concurrency 1 --beat``)
   and warmed up on a probe pair.
2. No backlog: ``--answers`` answers, one at a time, each on a pair nobody queued; the delay from
   the judgement's ``answered_at`` to its pair's last score (the figure of reference).
3. Backlog: the import's scores are queued (``queue_missing``, what ``pairs_created`` does), then
   ``--answers`` answers on pairs at the *end* of that backlog, ``--spacing`` seconds apart;
   the same delays, and how many backlog pairs were still unscored when the last answer's
   scores were in (the backlog was real).
4. ``--compare``: step 3 again on a fresh backlog with the dispatch of before (an answer whose
   scores are already queued sends nothing, so it waits for the backlog to reach it).

Prints the medians and the ratio backlog / no backlog.

    PARAEVAL_METRICS=lev,wer,bleu .venv/bin/python benchmarks/answer_under_backlog.py
    .venv/bin/python benchmarks/answer_under_backlog.py --backlog 5000 --answers 5 --compare

The periodic sweep is set to an hour so that it queues nothing during the measurement.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backlog", type=int, default=5000, help="pairs queued by the import")
    parser.add_argument("--answers", type=int, default=5, help="answers measured per phase")
    parser.add_argument("--spacing", type=float, default=0.2, help="seconds between answers under the backlog")
    parser.add_argument("--compare", action="store_true", help="also measure the dispatch of before")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()

    data = Path(tempfile.mkdtemp(prefix="paraeval-backlog-"))
    for name in ("DATABASE_URL", "REDIS_URL", "DEBUG"):
        os.environ.pop(name, None)
    os.environ.setdefault("PARAEVAL_METRICS", "lev,wer,bleu")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="paraeval.settings",
        SECRET_KEY="backlog-benchmark",
        PARAEVAL_DATA_DIR=str(data),
        PARAEVAL_SWEEP_SECONDS="3600",
    )
    os.environ.setdefault("NLTK_DATA", str(ROOT / "data" / "nltk_data"))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db.models import Count, Max
    from django.utils import timezone

    from annotate.models import Campaign, Judgement, Pair, Volunteer
    from annotate.signals import announce_judgement_recorded
    from scoring.models import Score
    from scoring.pipeline import configs, dispatch

    call_command("migrate", verbosity=0)
    metrics, _ = configs.build_enabled()
    enabled = configs.ensure_metric_configs(metrics)
    n_configs = len(enabled)
    print(f"metrics ({n_configs}): {', '.join(config.label for config in enabled)}")

    def make_pairs(slug: str, count: int) -> list[int]:
        campaign = Campaign.objects.create(slug=slug, name=slug)
        rows = Pair.objects.bulk_create(
            Pair(
                campaign=campaign,
                external_id=str(i),
                source=f"The committee number {i} approved the budget on Monday after a long debate.",
                hypothesis=f"After a long debate, committee {i} passed the budget on Monday.",
            )
            for i in range(count)
        )
        return [row.pk for row in rows]

    probe = make_pairs("probe", 1)
    calm = make_pairs("calm", args.answers)
    backlogs = [make_pairs("backlog", args.backlog)]
    if args.compare:
        backlogs.append(make_pairs("backlog-before", args.backlog))
    volunteer = Volunteer.objects.create(
        campaign=Campaign.objects.get(slug="calm"),
        english_level="good",
        guidelines_seen_at=timezone.now(),
        training_done_seen_at=timezone.now(),
    )

    def scored(pair_ids: list[int]) -> int:
        return Score.objects.filter(pair_id__in=pair_ids, metric_config__in=enabled).count()

    def answer(pair_id: int) -> float:
        """A judgement saved and announced as the answer view does; its answered_at (epoch s)."""
        now = timezone.now()
        judgement = Judgement.objects.create(
            volunteer=volunteer,
            pair_id=pair_id,
            label="same_meaning",
            source_on_top=True,
            is_training=False,
            shown_at=now,
            answered_at=now,
        )
        announce_judgement_recorded(judgement.pk, pair_id)  # autocommit: sent at once
        return now.timestamp()

    def last_score(pair_id: int) -> float:
        moment = Score.objects.filter(pair_id=pair_id).aggregate(last=Max("computed_at"))["last"]
        return float(moment.timestamp())

    log_path = data / "worker.log"
    command = [
        str(Path(sys.executable).parent / "celery"),
        "-A",
        "paraeval",
        "worker",
        "-Q",
        ",".join(configs.all_queues()),
        "--concurrency",
        "1",
        "--beat",
        "--schedule",
        str(data / "celerybeat-schedule"),
        "--loglevel",
        "INFO",
    ]
    with log_path.open("wb") as log:
        worker = subprocess.Popen(command, cwd=ROOT, env=os.environ.copy(), stdout=log, stderr=subprocess.STDOUT)

    def wait_until(done: object, what: str) -> None:
        deadline = time.monotonic() + args.timeout
        while not done():  # type: ignore[operator]
            if worker.poll() is not None:
                raise SystemExit(f"the worker stopped while waiting for {what}; see {log_path}")
            if time.monotonic() > deadline:
                raise SystemExit(f"no {what} after {args.timeout:.0f} s; see {log_path}")
            time.sleep(0.05)

    def under_backlog(backlog: list[int]) -> tuple[list[float], int, float]:
        """Delays of answers at the end of a freshly queued backlog; backlog pairs unscored when the
        last answer's scores were in; seconds the backlog took to drain."""
        queued_at = time.time()
        dispatch.queue_missing(backlog)
        targets = backlog[-args.answers :]
        answered = []
        for pair_id in targets:
            answered.append((pair_id, answer(pair_id)))
            time.sleep(args.spacing)
        wait_until(lambda: scored(targets) >= len(targets) * n_configs, "the answered pairs' scores")
        done = (
            Score.objects.filter(pair_id__in=backlog, metric_config__in=enabled)
            .values("pair_id")
            .annotate(n=Count("id"))
            .filter(n=n_configs)
            .count()
        )
        left = args.backlog - done
        wait_until(lambda: scored(backlog) >= len(backlog) * n_configs, "the backlog's scores")
        drained = max(last_score(pair_id) for pair_id in backlog[-10:]) - queued_at
        return [last_score(pair_id) - moment for pair_id, moment in answered], left, drained

    try:
        dispatch.queue_missing(probe)
        wait_until(lambda: scored(probe) >= n_configs, "the probe pair's scores")
        calm_delays = []
        for pair_id in calm:
            moment = answer(pair_id)
            wait_until(lambda: scored([pair_id]) >= n_configs, "an answered pair's scores")  # noqa: B023
            calm_delays.append(last_score(pair_id) - moment)
            time.sleep(0.5)
        results = [("answers first (this branch)", *under_backlog(backlogs[0]))]
        if args.compare:
            dispatch.queue_answered = dispatch.queue_missing  # type: ignore[assignment]  # before
            results.append(("dispatch of before", *under_backlog(backlogs[1])))
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            worker.kill()

    reference = statistics.median(calm_delays)
    print(
        f"\nAnswer -> its pair's last score ({n_configs} metric configurations, 1 worker process, "
        f"filesystem broker, SQLite):"
    )
    print(f"  no backlog:  median {reference:.2f} s  (max {max(calm_delays):.2f} s, {len(calm_delays)} answers)")
    for label, delays, left, drained in results:
        median = statistics.median(delays)
        print(
            f"  {args.backlog}-pair backlog, {label}: median {median:.2f} s (max {max(delays):.2f} s); "
            f"ratio to no backlog {median / reference:.1f}x; backlog pairs still unscored then: {left}; "
            f"the backlog took {drained:.1f} s to score"
        )
    import shutil

    shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
