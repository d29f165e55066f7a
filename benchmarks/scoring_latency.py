"""How long after a volunteer's answer are its pair's scores there? The embedded default, measured.

Not a test: a script that prints figures. On the embedded default (SQLite, kombu's filesystem
broker, the models PyPI packages ship, every metric of the default ``PARAEVAL_METRICS``) it

1. creates a fresh data folder, migrates, and stores MRPC pairs *without* queueing their
   scores (as if imported with scoring deferred), plus one probe pair;
2. starts the worker exactly as ``scripts/run.sh`` does (one process on ``llm,cpu``,
   ``--concurrency 1 --beat``), waits for its warm-up and for the probe pair's scores;
3. saves N judgements through the volunteer flow (``annotate.flow.record_answer``, the function
   the answer view calls), one every ``--spacing`` seconds, and reports the delay from each
   judgement's save to its pair's last score (median, p95, max);
4. queues the scores of ``--bulk`` more pairs at once and reports the throughput per queue;
5. reports the peak resident memory (VmHWM) of the worker's processes;
6. reference, in this process and the same models: the time to score one pair with every
   metric directly (no queue, no worker), and the ratio of the end-to-end delay to it.

    .venv/bin/python benchmarks/scoring_latency.py                 # 50 judgements, 5 s apart
    .venv/bin/python benchmarks/scoring_latency.py --judgements 10 --bulk 20 --no-reference

The periodic sweep is set to an hour so that it does not queue the deferred pairs during the
measurement (in production it runs every minute and only tops up idle queues).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MRPC = (
    Path(os.environ.get("PARAEVAL_SHARED_DATA", ROOT.parent / "shared" / "data")) / "mrpc" / "msr_paraphrase_test.txt"
)


def mrpc_pairs(count: int) -> list[tuple[str, str]]:
    """The first ``count`` MRPC test pairs (tab-separated, no CSV quoting, BOM at the start)."""
    pairs = []
    with MRPC.open(encoding="utf-8-sig") as handle:
        next(handle)
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            pairs.append((fields[3], fields[4]))
            if len(pairs) == count:
                break
    if len(pairs) < count:
        raise SystemExit(f"{MRPC} has only {len(pairs)} pairs")
    return pairs


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def peak_rss(pid: int, field: str = "VmHWM:") -> dict[str, float]:
    """VmHWM (peak resident set, MiB) of the worker's main process and each of its children."""
    import psutil

    result: dict[str, float] = {}
    main = psutil.Process(pid)
    for process in [main, *main.children(recursive=True)]:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
        except OSError:
            continue
        kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith(field))
        label = f"main process {pid}" if process.pid == pid else f"child process {process.pid}"
        result[label] = kib / 1024
    return result


# A score_pairs task logs one result per configuration: its metric and the seconds it took.
_TASK_DONE = re.compile(r"'metric': '([a-z0-9_]+)'[^{}]*?'seconds': ([0-9.e-]+)")


def task_seconds(log_path: Path, offset: int) -> dict[str, float]:
    """Seconds the worker spent in scoring tasks per metric, from its log after ``offset``."""
    spent: dict[str, float] = {}
    with log_path.open(errors="replace") as log:
        log.seek(offset)
        for line in log:
            if "succeeded in" not in line:
                continue
            for match in _TASK_DONE.finditer(line):
                spent[match.group(1)] = spent.get(match.group(1), 0.0) + float(match.group(2))
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judgements", type=int, default=50)
    parser.add_argument("--spacing", type=float, default=5.0, help="seconds between two judgements")
    parser.add_argument("--bulk", type=int, default=60, help="pairs queued at once for the throughput")
    parser.add_argument("--timeout", type=float, default=600, help="give up waiting for scores after this")
    parser.add_argument("--no-reference", action="store_true", help="skip the in-process reference timing")
    parser.add_argument("--metrics", default="", help="comma-separated metric names (default: PARAEVAL_METRICS)")
    parser.add_argument("--keep", action="store_true", help="keep the data folder")
    args = parser.parse_args()

    data = Path(tempfile.mkdtemp(prefix="paraeval-latency-"))
    for name in ("DATABASE_URL", "REDIS_URL", "PARAEVAL_METRICS", "DEBUG"):
        os.environ.pop(name, None)
    os.environ.update(
        DJANGO_SETTINGS_MODULE="paraeval.settings",
        SECRET_KEY="latency-benchmark",
        PARAEVAL_DATA_DIR=str(data),
        PARAEVAL_SWEEP_SECONDS="3600",
    )
    if args.metrics:
        os.environ["PARAEVAL_METRICS"] = args.metrics
    os.environ.setdefault("NLTK_DATA", str(ROOT / "data" / "nltk_data"))
    # As scripts/run.sh starts the embedded worker (ParaPLUIE batches of 8 on CPU).
    os.environ.setdefault("PARAPLUIE_BATCH_SIZE", "8")
    # The reference below runs with the worker's thread count (PARAEVAL_WORKER_THREADS, default 1).
    threads = int(os.environ.get("PARAEVAL_WORKER_THREADS", "1"))
    if threads:
        os.environ["OMP_NUM_THREADS"] = str(threads)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db.models import Count, Max

    from annotate import flow
    from annotate.models import Campaign, Pair
    from scoring.models import Score
    from scoring.pipeline import configs, dispatch, runner

    call_command("migrate", verbosity=0)
    metrics, unavailable = configs.build_enabled()
    enabled = configs.ensure_metric_configs(metrics)
    print(f"metrics ({len(enabled)}): {', '.join(config.label for config in enabled)}")
    for item in unavailable:
        print(f"  not available here: {item.name} ({item.reason})")
    n_configs = len(enabled)

    texts = mrpc_pairs(1 + args.judgements + args.bulk)
    campaign = Campaign.objects.create(slug="latency", name="Latency", quota=args.judgements)
    probe_campaign = Campaign.objects.create(slug="probe", name="Probe")
    bulk_campaign = Campaign.objects.create(slug="bulk", name="Bulk")
    probe = Pair.objects.create(campaign=probe_campaign, source=texts[0][0], hypothesis=texts[0][1])
    # Scoring deferred: stored without announcing them.
    Pair.objects.bulk_create(
        Pair(campaign=campaign, external_id=str(i), source=s, hypothesis=h)
        for i, (s, h) in enumerate(texts[1 : 1 + args.judgements])
    )
    bulk = Pair.objects.bulk_create(
        Pair(campaign=bulk_campaign, external_id=str(i), source=s, hypothesis=h)
        for i, (s, h) in enumerate(texts[1 + args.judgements :])
    )

    def scored(pair_ids: list[int]) -> int:
        return Score.objects.filter(pair_id__in=pair_ids, metric_config__in=enabled).count()

    log_path = data / "worker.log"
    # The worker line of scripts/run.sh.
    command = [
        str(Path(sys.executable).parent / "celery"),
        "-A",
        "paraeval",
        "worker",
        "-Q",
        ",".join(configs.all_queues()),  # every queue, as manage.py worker_queues prints them
        "--concurrency",
        "1",
        "--beat",
        "--schedule",
        str(data / "celerybeat-schedule"),
        "--loglevel",
        "INFO",
    ]
    started = time.perf_counter()
    with log_path.open("wb") as log:
        worker = subprocess.Popen(command, cwd=ROOT, env=os.environ.copy(), stdout=log, stderr=subprocess.STDOUT)
    try:

        def wait_until(done: object, what: str) -> None:
            deadline = time.monotonic() + args.timeout
            while not done():  # type: ignore[operator]
                if worker.poll() is not None:
                    raise SystemExit(f"the worker stopped while waiting for {what}; see {log_path}")
                if time.monotonic() > deadline:
                    raise SystemExit(f"no {what} after {args.timeout:.0f} s; see {log_path}")
                time.sleep(0.1)

        dispatch.queue_missing([probe.pk])
        wait_until(lambda: scored([probe.pk]) >= n_configs, "scores of the probe pair")
        print(f"worker warm (models loaded, probe pair scored) after {time.perf_counter() - started:.1f} s")
        warm_memory = peak_rss(worker.pid, "VmRSS:")

        # --- latency: judgements through the volunteer flow, spaced ----------------------------
        volunteer = flow.start_volunteer(campaign, english_level="native", consented=True)
        judged: list[tuple[int, object]] = []
        for _ in range(args.judgements):
            item = flow.current_pair(volunteer)
            if item is None:
                break
            time.sleep(args.spacing)
            result = flow.record_answer(volunteer, item.pair.pk, "same_meaning")
            judged.append((item.pair.pk, result.judgement.answered_at))
        pair_ids = [pair_id for pair_id, _ in judged]
        wait_until(lambda: scored(pair_ids) >= len(pair_ids) * n_configs, "the judged pairs' scores")
        last = dict(
            Score.objects.filter(pair_id__in=pair_ids)
            .values("pair_id")
            .annotate(last=Max("computed_at"))
            .values_list("pair_id", "last")
        )
        delays = [(last[pair_id] - saved).total_seconds() for pair_id, saved in judged]
        failed = Score.objects.filter(pair_id__in=pair_ids, status=Score.Status.FAILED).count()

        # --- throughput: many pairs queued at once ----------------------------------------------
        bulk_ids = [pair.pk for pair in bulk]
        log_offset = log_path.stat().st_size
        bulk_started = time.time()
        dispatch.queue_missing(bulk_ids)
        wait_until(lambda: scored(bulk_ids) >= len(bulk_ids) * n_configs, "the bulk pairs' scores")
        per_config = (
            Score.objects.filter(pair_id__in=bulk_ids)
            .values("metric_config__metric", "metric_config__label", "metric_config__queue")
            .annotate(n=Count("id"), last=Max("computed_at"))
        )
        busy = task_seconds(log_path, log_offset)
        memory = peak_rss(worker.pid)
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            worker.kill()

    print()
    print(
        f"Judgement save -> its pair's last score ({len(delays)} judgements, {args.spacing:g} s apart, "
        f"{n_configs} metric configurations per pair, 1 worker process, filesystem broker, SQLite):"
    )
    print(
        f"  median {statistics.median(delays):.2f} s   p95 {percentile(delays, 0.95):.2f} s   "
        f"max {max(delays):.2f} s   min {min(delays):.2f} s   failed scores: {failed}"
    )
    print()
    print(
        f"Throughput, {len(bulk_ids)} pairs queued at once ({len(bulk_ids) * n_configs} scores, batches of "
        f"{settings.PARAEVAL_SCORING_BATCH_SIZE}); the one worker process takes both queues in turn:"
    )
    total_span = max(row["last"].timestamp() for row in per_config) - bulk_started
    for queue in configs.all_queues():
        rows = [row for row in per_config if row["metric_config__queue"] == queue]
        if not rows:
            continue
        scores = sum(row["n"] for row in rows)
        seconds = sum(busy.get(row["metric_config__metric"], 0.0) for row in rows)
        print(
            f"  queue {queue}: {scores:>4} scores in {seconds:6.1f} s of worker time = "
            f"{scores / max(seconds, 1e-6):7.1f} scores/s"
        )
        for row in sorted(rows, key=lambda row: row["metric_config__label"]):
            spent = busy.get(row["metric_config__metric"], 0.0)
            print(f"    {row['metric_config__label']:<46} {row['n'] / max(spent, 1e-6):8.1f} pairs/s ({spent:5.1f} s)")
    print(
        f"  wall clock: {len(bulk_ids) * n_configs} scores in {total_span:.1f} s = "
        f"{len(bulk_ids) * n_configs / total_span:.1f} scores/s, {len(bulk_ids) / total_span:.2f} pairs/s fully scored"
    )
    print()
    print("Worker resident memory: after warm-up (VmRSS) and peak over the run (VmHWM):")
    for label, mib in memory.items():
        print(f"  {label:<40} {warm_memory.get(label, 0):7.0f} MiB   peak {mib:7.0f} MiB")
    print(
        f"  {'largest process':<40} {max(memory.values()):7.0f} MiB   (all processes: {sum(memory.values()):.0f} MiB)"
    )

    if not args.no_reference:
        # The same work with no queue and no worker: every metric on one pair, in this process.
        reference = []
        for pair_id, _ in judged[:10]:
            Score.objects.filter(pair_id=pair_id).delete()
        for metric in metrics:  # load the models first, as the worker did in its warm-up
            runner.compute(metric, [texts[0]])
        for pair_id, _ in judged[:10]:
            begin = time.perf_counter()
            for metric in metrics:
                runner.score_missing(metric, pair_ids=[pair_id])
            reference.append(time.perf_counter() - begin)
        median_reference = statistics.median(reference)
        print()
        print(
            f"Reference, same process and models, no queue: one pair through every metric = "
            f"{median_reference:.2f} s (median of {len(reference)})"
        )
        print(f"  end-to-end median / direct = {statistics.median(delays) / median_reference:.2f}x")
    print(
        f"\nsettings: batch size {settings.PARAEVAL_SCORING_BATCH_SIZE}, filesystem polling "
        f"{settings.CELERY_BROKER_TRANSPORT_OPTIONS.get('polling_interval')} s, prefetch "
        f"{settings.CELERY_WORKER_PREFETCH_MULTIPLIER}; data folder {data}" + ("" if args.keep else " (removed)")
    )
    if not args.keep:
        import shutil

        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
