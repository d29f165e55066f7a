"""Peak memory of ``manage.py import_pairs`` on a large generated CSV, measured as the command runs.

Generates a CSV of ``--megabytes`` (default 200) in a temporary folder (never in the
repository), migrates a throw-away database (``bench_import_memory`` on the PostgreSQL server
of ``DATABASE_URL``, or a SQLite file in the temporary folder without it), then imports the
file with the command a user runs (``manage.py import_pairs FILE --campaign memory --create``,
the scores of the new pairs queued after the commit, as always) and reports the command's peak
resident memory, the kernel's high-water mark from ``wait4``, with its resident memory sampled
while it runs (after start-up, then at each quarter of the run).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/paraeval .venv/bin/python benchmarks/import_memory.py
    .venv/bin/python benchmarks/import_memory.py --megabytes 20
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DATABASE = f"bench_import_memory_{os.getpid()}"  # two runs on one server never collide
MIB = 1024 * 1024
WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "house",
    "river",
    "city",
    "market",
    "council",
    "minister",
    "report",
    "said",
    "would",
    "could",
    "after",
    "before",
    "during",
    "company",
    "shares",
    "percent",
    "year",
    "month",
    "week",
    "government",
    "police",
    "court",
    "judge",
    "people",
    "children",
    "school",
    "water",
    "announced",
    "reported",
    "expected",
    "increased",
    "decreased",
    "million",
    "billion",
    "new",
    "old",
    "first",
    "last",
    "early",
    "late",
]


def sentence(rng: random.Random, words_range: tuple[int, int] = (12, 28)) -> str:
    """A sentence of 12-28 words (or ``words_range``), with a comma now and then (some cells quoted)."""
    words = rng.choices(WORDS, k=rng.randint(*words_range))
    if rng.random() < 0.2:
        words[rng.randrange(1, len(words))] += ","
    return " ".join(words).capitalize() + "."


def write_csv(path: Path, megabytes: float, seed: int = 7, words_range: tuple[int, int] = (12, 28)) -> int:
    """Write a CSV of about ``megabytes`` MiB with id, source, hypothesis, label and system columns;
    return its number of rows."""
    import csv

    rng = random.Random(seed)
    target = int(megabytes * MIB)
    rows = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "source", "hypothesis", "label", "system"])
        while handle.tell() < target:
            rows += 1
            source, hypothesis = sentence(rng, words_range), sentence(rng, words_range)
            writer.writerow([f"g{rows}", source, hypothesis, rng.randint(0, 1), f"system-{rows % 7}"])
    return rows


def run_command(
    command: list[str], env: dict[str, str], interval: float = 0.02
) -> tuple[int, list[tuple[float, int]], str]:
    """Run ``command``; its peak resident memory in bytes (the kernel's high-water mark, from
    ``wait4``), its resident memory sampled every ``interval`` seconds (seconds, bytes), its output."""
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
        samples: list[tuple[float, int]] = []
        start = time.perf_counter()
        status = Path(f"/proc/{process.pid}/status")
        while True:
            pid, wait_status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        samples.append((time.perf_counter() - start, int(line.split()[1]) * 1024))
            except (OSError, ValueError, IndexError):
                pass
            if samples and len(samples) % 500 == 0:  # about every 10 s: a long run shows its progress
                print(
                    f"  [{samples[-1][0]:6.0f} s] resident {samples[-1][1] / MIB:7.1f} MiB", file=sys.stderr, flush=True
                )
            time.sleep(interval)
        process.returncode = os.waitstatus_to_exitcode(wait_status)
        output.seek(0)
        text = output.read().decode(errors="replace")
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{text[-3000:]}")
    return usage.ru_maxrss * 1024, samples, text


def database_url(folder: Path) -> tuple[str, str | None]:
    """A throw-away database: (its URL, the URL to drop it with, or None for a SQLite file)."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        return f"sqlite:///{folder / 'bench.sqlite3'}", None
    import psycopg

    base, _, _ = url.rpartition("/")
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {BENCH_DATABASE}")
        admin.execute(f"CREATE DATABASE {BENCH_DATABASE}")
    return f"{base}/{BENCH_DATABASE}", f"{base}/postgres"


def drop(admin_url: str | None) -> None:
    if admin_url is None:
        return
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {BENCH_DATABASE}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=float, default=200.0, help="size of the generated CSV (MiB)")
    parser.add_argument(
        "--words", default="12-28", help="words per sentence, MIN-MAX (10-23: about 900,000 pairs in 201 MiB)"
    )
    options = parser.parse_args()
    low, _, high = options.words.partition("-")
    with tempfile.TemporaryDirectory(prefix="paraeval-import-memory-") as folder:
        csv_path = Path(folder) / "pairs.csv"
        rows = write_csv(csv_path, options.megabytes, words_range=(int(low), int(high)))
        size = csv_path.stat().st_size
        url, admin_url = database_url(Path(folder))
        env = {**os.environ, "DATABASE_URL": url, "SECRET_KEY": "import-memory-benchmark"}
        env.pop("DJANGO_SETTINGS_MODULE", None)  # manage.py's own: the production settings
        env.setdefault("PARAEVAL_DATA_DIR", str(Path(folder) / "data"))
        try:
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "-v", "0"],
                cwd=ROOT,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            command = [sys.executable, "manage.py", "import_pairs", str(csv_path), "--campaign", "memory", "--create"]
            peak, samples, output = run_command(command, env)
        finally:
            drop(admin_url)
    created = int(output.split("Imported ", 1)[1].split(" ", 1)[0].replace(",", ""))
    assert created == rows, (created, rows, output)
    vendor = "PostgreSQL" if admin_url else "SQLite"
    seconds = samples[-1][0] if samples else 0.0
    print(
        f"manage.py import_pairs of a generated CSV on {vendor}: {size / MIB:,.1f} MiB, {rows:,} pairs, {seconds:.1f} s"
    )
    print(f"  peak RSS of the command (kernel high-water mark): {peak / MIB:,.1f} MiB = {peak / 1e6:,.1f} MB")
    print(f"  ratio to the file's size: {peak / size:.2f}x")
    if samples:
        first_second = max((rss for moment, rss in samples if moment <= 1.0), default=0)
        print(f"  resident after start-up (first second): {first_second / MIB:,.1f} MiB")
        for share in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
            moment, rss = samples[min(len(samples) - 1, int(share * (len(samples) - 1)))]
            print(f"    at {moment:6.1f} s: {rss / MIB:7.1f} MiB")
        print(f"  largest sample: {max(rss for _, rss in samples) / MIB:,.1f} MiB")
    metrics = os.environ.get("PARAEVAL_METRICS", "(default)")
    print(f"  PARAEVAL_METRICS={metrics}; the new pairs' scores are queued as the command does")


if __name__ == "__main__":
    main()
