"""How fast ``import_pairs`` stores a real corpus, against a per-row reference in the same run.

Imports MRPC train (4,076 pairs) into fresh campaigns of a throw-away database (created and
dropped here: ``bench_<name>`` on PostgreSQL, in memory on SQLite) and prints the median time
of the importer next to a straightforward importer that validates the same way and then calls
``Pair.objects.create`` once per row. Ratios, not timed assertions.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/paraeval .venv/bin/python benchmarks/import_speed.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django  # noqa: E402

django.setup()

from django.db import connection, transaction  # noqa: E402

from annotate.importers import import_file  # noqa: E402
from annotate.importers.formats import parse_file  # noqa: E402
from annotate.importers.pipeline import validate_parsed  # noqa: E402
from annotate.models import Campaign, Pair  # noqa: E402
from annotate.signals import pairs_created  # noqa: E402

# The shared corpora: PARAEVAL_SHARED_DATA, else shared/data beside the checkout (as tests/corpora.py).
DATA = Path(os.environ.get("PARAEVAL_SHARED_DATA") or ROOT.parent / "shared" / "data")
CORPUS = DATA / "mrpc" / "msr_paraphrase_train.txt"
REPEATS = 3


def per_row_reference(campaign: Campaign, path: Path) -> int:
    """The same reading and validation, then one INSERT per pair (what a naive importer does)."""
    parsed = parse_file(path.read_bytes(), filename=path.name)
    drafts, _, problems = validate_parsed(parsed, max_length=1000, origin="")
    assert not problems
    with transaction.atomic():
        for draft in drafts:
            Pair.objects.create(
                campaign=campaign,
                external_id=draft.external_id,
                origin=draft.origin,
                source=draft.source,
                hypothesis=draft.hypothesis,
                gold_label=draft.gold_label,
            )
    return len(drafts)


def timed(function, *args) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def main() -> None:
    if not CORPUS.exists():
        sys.exit(f"MRPC train is not at {CORPUS} (set PARAEVAL_SHARED_DATA)")
    if connection.vendor == "postgresql":
        connection.settings_dict["TEST"]["NAME"] = f"bench_{connection.settings_dict['NAME']}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        ours, reference, reading = [], [], []
        # The receivers of pairs_created (scoring's dispatch) are set aside for the comparison:
        # the reference sends no signal. Their cost is measured once on its own below.
        receivers, pairs_created.receivers = pairs_created.receivers, []
        for number in range(REPEATS):
            fast = Campaign.objects.create(slug=f"fast-{number}", name="fast")
            slow = Campaign.objects.create(slug=f"slow-{number}", name="slow")
            ours.append(timed(import_file, fast, CORPUS))
            reference.append(timed(per_row_reference, slow, CORPUS))
            reading.append(timed(lambda: validate_parsed(parse_file(CORPUS.read_bytes()), max_length=1000, origin="")))
            assert fast.pairs.count() == slow.pairs.count() == 4076
        pairs_created.receivers = receivers
        with_receivers = timed(import_file, Campaign.objects.create(slug="signalled", name="signalled"), CORPUS)
        ours_s, reference_s, reading_s = (statistics.median(values) for values in (ours, reference, reading))
        print(f"database: {connection.vendor}; corpus: MRPC train, 4,076 pairs; median of {REPEATS} runs")
        print(f"  import_file (bulk, one transaction):  {ours_s:6.3f} s  ({4076 / ours_s:,.0f} pairs/s)")
        print(f"    of which read + validate:          {reading_s:6.3f} s")
        print(f"  reference, one INSERT per pair:      {reference_s:6.3f} s")
        print(f"  ratio: import_file is {reference_s / ours_s:.1f}x faster than the per-row reference")
        print(
            f"  import_file with the {len(receivers)} pairs_created receiver(s) of this checkout connected: "
            f"{with_receivers:6.3f} s (one run)"
        )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
