"""Scores delivered over time while a plug-in misbehaves, against the same run with a good plug-in.

Not a test: a script that prints figures. On the embedded default (SQLite, kombu's filesystem
broker) it installs the example plug-in (``example_overlap``) and the test plug-ins of
``tests/plugin_metrics.py``, then runs one real worker (``-Q example --concurrency 1 --beat``)
per scenario, each on ``--pairs`` fresh pairs queued at once in messages of
``--batch`` pairs, every message carrying both metrics of its queue:

* ``exiting``: ``test_exiting`` (calls ``os._exit`` in the pool process) first in each message,
  then ``example_overlap``;
* ``sleeping``: ``test_sleeping`` (sleeps an hour, limited to ``--limit`` seconds) first, then
  ``example_overlap``;
* ``removed``: messages queued with ``test_exiting`` and ``example_overlap``, taken by a
  worker restarted with ``test_exiting`` removed from ``PARAEVAL_METRICS``;
* ``reference``: ``example_overlap`` alone, last, in the same process.

For each it prints, at every change, the seconds since the pairs were queued (the worker's start
included), the good metric's scores stored and the bad metric's failed scores, then the pool
processes lost and the reasons stored; at the end, the time to the last good score of each
scenario and its ratio to the reference. Each scenario is bounded by ``--timeout``. On the
embedded broker a message lost with its pool process comes back with the sweep (every 5 s
here); on Redis (``--redis``) Celery puts it back at once.

    .venv/bin/python benchmarks/plugin_isolation.py
    .venv/bin/python benchmarks/plugin_isolation.py --pairs 8 --batch 4 --timeout 60
    .venv/bin/python benchmarks/plugin_isolation.py --redis redis://127.0.0.1:6379/2
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOOD = "example_overlap"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=24)
    parser.add_argument("--batch", type=int, default=8, help="pairs per message (PARAEVAL_SCORING_BATCH_SIZE)")
    parser.add_argument("--limit", type=int, default=2, help="time limit of the sleeping plug-in (seconds)")
    parser.add_argument("--budget", type=int, default=3, help="PARAEVAL_METRIC_CRASH_BUDGET")
    parser.add_argument("--timeout", type=float, default=180, help="give up on a scenario after this")
    parser.add_argument("--redis", default="", help="a Redis URL to use as the broker instead of the embedded one")
    args = parser.parse_args()

    data = Path(tempfile.mkdtemp(prefix="paraeval-plugin-isolation-"))
    for name in ("DATABASE_URL", "REDIS_URL", "PARAEVAL_METRICS", "DEBUG"):
        os.environ.pop(name, None)
    os.environ.update(
        DJANGO_SETTINGS_MODULE="paraeval.settings",
        SECRET_KEY="plugin-isolation-benchmark",
        PARAEVAL_DATA_DIR=str(data),
        PARAEVAL_METRICS=GOOD,
        PARAEVAL_SCORING_BATCH_SIZE=str(args.batch),
        PARAEVAL_SCORING_TAKE_ALONG="0",
        PARAEVAL_METRIC_CRASH_BUDGET=str(args.budget),
        PARAEVAL_METRIC_TIME_LIMITS=f"test_sleeping={args.limit}",
        # A message lost with its pool process (the embedded broker) is queued again by the sweep.
        PARAEVAL_SWEEP_SECONDS="5",
    )
    if args.redis:
        os.environ["REDIS_URL"] = args.redis
    sys.path.insert(0, str(ROOT))
    from tests.plugin_support import install_example, on_path, write_bad_plugins

    site = install_example(data / "example")
    bad = write_bad_plugins(data / "bad")
    import django

    with on_path(site, bad):
        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        print(
            f"{args.pairs} pairs per scenario, {args.batch} pairs per message, crash budget {args.budget}, "
            f"test_sleeping limited to {args.limit} s; one worker, --concurrency 1, "
            f"{'Redis' if args.redis else 'embedded'} broker, SQLite"
        )
        plugins = [str(site), str(bad), str(ROOT)]
        # The bad plug-in's configuration is created first, so it comes first in every message:
        # the worst order for the good metric. The reference runs last, in the same process.
        results = {
            name: scenario(name, queued_with, worker_metrics, args, data, plugins)
            for name, queued_with, worker_metrics in (
                ("exiting", ["test_exiting", GOOD], ["test_exiting", GOOD]),
                ("sleeping", ["test_sleeping", GOOD], ["test_sleeping", GOOD]),
                ("removed", ["test_exiting", GOOD], [GOOD]),
                ("reference", [GOOD], [GOOD]),
            )
        }
        reference = results["reference"]
        print(f"seconds from queueing to the last {GOOD} score (worker start included), against the reference")
        for name, seconds in results.items():
            print(f"  {name:<10} {seconds:6.1f} s  {seconds / reference:4.1f} times the reference")


def scenario(
    name: str, queued_with: list[str], worker_metrics: list[str], args: argparse.Namespace, data: Path, path: list[str]
) -> float:
    """Queue pairs with ``queued_with``, run a worker with ``worker_metrics``: seconds to the last good score."""
    from django.test import override_settings

    from annotate.models import Campaign, Pair
    from scoring.models import Score
    from scoring.pipeline import configs, dispatch

    bad = next((metric for metric in queued_with if metric != GOOD), "")
    with override_settings(PARAEVAL_METRICS=queued_with):
        configs.forget_enabled()
        campaign = Campaign.objects.create(slug=name, name=name)
        pairs = Pair.objects.bulk_create(
            Pair(campaign=campaign, external_id=str(i), source=f"The dog {i} runs.", hypothesis=f"Dog {i} is running.")
            for i in range(args.pairs)
        )
        ids = [pair.pk for pair in pairs]
        started = time.monotonic()
        dispatch.queue_missing(ids)
    configs.forget_enabled()
    log_path = data / f"worker-{name}.log"
    env = {
        **os.environ,
        "PARAEVAL_METRICS": ",".join(worker_metrics),
        "PYTHONPATH": os.pathsep.join([*path, os.environ.get("PYTHONPATH", "")]),
    }
    command = [str(Path(sys.executable).parent / "celery"), "-A", "paraeval", "worker", "-Q", "example"]
    command += ["--concurrency", "1", "--beat", "--schedule", str(data / f"beat-{name}"), "--loglevel", "INFO"]
    print(f"{name}: queued with {', '.join(queued_with)}; worker runs {', '.join(worker_metrics)}")
    print(f"  {'seconds':>7}  {GOOD + ' stored':>22}  {(bad + ' failed') if bad else '':>22}")
    with log_path.open("wb") as log:
        worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    scores = Score.objects.filter(pair_id__in=ids)
    last_seen = (-1, -1)
    last_good = float("nan")
    try:
        while time.monotonic() - started < args.timeout:
            good = scores.filter(metric_config__metric=GOOD, status=Score.Status.DONE).count()
            failed = scores.filter(metric_config__metric=bad, status=Score.Status.FAILED).count() if bad else 0
            elapsed = time.monotonic() - started
            if (good, failed) != last_seen:
                print(f"  {elapsed:7.1f}  {good:>22}  {failed if bad else '':>22}")
                last_seen = (good, failed)
                if good == len(ids) and last_good != last_good:  # NaN: not yet
                    last_good = elapsed
            bad_done = not bad or bad not in worker_metrics or failed == len(ids)
            if good == len(ids) and bad_done:
                break
            time.sleep(0.2)
        else:
            print(f"  gave up after {args.timeout:.0f} s")
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    log = log_path.read_text(errors="replace")
    lost = log.count("exited with 'exitcode")
    reasons = sorted(set(scores.filter(status=Score.Status.FAILED).values_list("error", flat=True)))
    print(f"  last {GOOD} score after {last_good:.1f} s; pool processes lost: {lost}")
    print(f"  reasons stored: {reasons or 'none'}")
    if bad and bad not in worker_metrics:
        print(f"  {bad} scores stored: {scores.filter(metric_config__metric=bad).count()} (its queued work dropped)")
    Campaign.objects.filter(pk=campaign.pk).delete()
    print()
    return last_good


if __name__ == "__main__":
    main()
