"""Peak memory of ``import_file`` on a large generated CSV, as a ratio to the file's size.

Generates a CSV of ``--megabytes`` (default 200) in a temporary folder (never in the
repository), migrates a throw-away database (``bench_import_memory`` on the PostgreSQL server
of ``DATABASE_URL``, or a SQLite file in the temporary folder without it), then imports the
file in a fresh subprocess and reports that process's peak resident memory (``ru_maxrss``):
in all, above what the process held before the import (Django loaded, connected), and both
as a ratio to the file's size. The receivers of ``pairs_created`` (scoring's dispatch) are set
aside: their cost is the scoring's, not the importer's.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/paraeval .venv/bin/python benchmarks/import_memory.py
    .venv/bin/python benchmarks/import_memory.py --megabytes 20
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DATABASE = "bench_import_memory"
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


def sentence(rng: random.Random) -> str:
    """A sentence of 12-28 words, with a comma now and then (so some cells are quoted)."""
    words = rng.choices(WORDS, k=rng.randint(12, 28))
    if rng.random() < 0.2:
        words[rng.randrange(1, len(words))] += ","
    return " ".join(words).capitalize() + "."


def write_csv(path: Path, megabytes: float, seed: int = 7) -> int:
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
            writer.writerow([f"g{rows}", sentence(rng), sentence(rng), rng.randint(0, 1), f"system-{rows % 7}"])
    return rows


def peak_rss_bytes() -> int:
    """This process's peak resident memory so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(csv_path: Path) -> None:
    """Import ``csv_path`` into a new campaign; print the memory figures as JSON."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    from annotate.importers import import_file
    from annotate.models import Campaign
    from annotate.signals import pairs_created

    pairs_created.receivers = []
    campaign = Campaign.objects.create(slug=f"memory-{os.getpid()}", name="memory")
    before = peak_rss_bytes()
    start = time.perf_counter()
    report = import_file(campaign, csv_path)
    seconds = time.perf_counter() - start
    print(json.dumps({"created": report.created, "before": before, "peak": peak_rss_bytes(), "seconds": seconds}))


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
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child is not None:
        child(options.child)
        return
    with tempfile.TemporaryDirectory(prefix="paraeval-import-memory-") as folder:
        csv_path = Path(folder) / "pairs.csv"
        rows = write_csv(csv_path, options.megabytes)
        size = csv_path.stat().st_size
        url, admin_url = database_url(Path(folder))
        env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "tests.settings"}
        env.setdefault("PARAEVAL_DATA_DIR", str(Path(folder) / "data"))
        try:
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "-v", "0"],
                cwd=ROOT,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(csv_path)],
                cwd=ROOT,
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
        finally:
            drop(admin_url)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["created"] == rows, figures
    peak, before = figures["peak"], figures["before"]
    vendor = "PostgreSQL" if admin_url else "SQLite"
    print(
        f"import_file of a generated CSV on {vendor}: {size / MIB:,.1f} MiB, {rows:,} pairs, {figures['seconds']:.1f} s"
    )
    print(f"  peak RSS of the importing process: {peak / MIB:,.1f} MiB  ({peak / size:.2f}x the file's size)")
    print(f"  of which before the import (Django, connection): {before / MIB:,.1f} MiB")
    print(
        f"  growth during the import: {(peak - before) / MIB:,.1f} MiB  ({(peak - before) / size:.2f}x the file's size)"
    )


if __name__ == "__main__":
    main()
