"""``manage.py import_pairs``: summary, refusals on stderr with a non-zero exit, signals after commit."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from annotate.importers import ImportRefused, import_file
from annotate.models import Campaign, Pair
from annotate.signals import pairs_created
from tests.builders import make_campaign

ROOT = Path(__file__).resolve().parent.parent
GOOD = "id,source,hypothesis,label,score[lev]\na,The cat sleeps.,The cat is asleep.,1,0.5\nb,A b.,C d.,0,0.9\n"
BAD = "id,source,hypothesis\na,The cat sleeps.,The cat is asleep.\nb,,C d.\na,E f.,G h.\n"


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_pairs", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def good_file(tmp_path: Path) -> Path:
    path = tmp_path / "good.csv"
    path.write_text(GOOD, encoding="utf-8")
    return path


@pytest.fixture
def bad_file(tmp_path: Path) -> Path:
    path = tmp_path / "bad.csv"
    path.write_text(BAD, encoding="utf-8")
    return path


@pytest.mark.django_db
def test_import_prints_a_summary(good_file):
    make_campaign(slug="news")
    out, err = run(str(good_file), "--campaign", "news")
    assert out.splitlines() == [
        "Imported 2 pairs into campaign 'news'.",
        "  format: csv",
        "  training pairs: 0",
        "  check pairs: 0",
        "  ignored columns: score[lev]",
        "  gold: 2 labelled (1 paraphrase, 1 non-paraphrase), 0 with a graded score",
    ]
    assert err == ""
    assert Pair.objects.filter(campaign__slug="news").count() == 2


@pytest.mark.django_db
def test_create_makes_the_campaign_with_its_name(good_file):
    out, _ = run(str(good_file), "--campaign", "new-one", "--create", "--name", "New one", "--origin", "web")
    assert out.startswith("Created campaign 'new-one'.\nImported 2 pairs")
    campaign = Campaign.objects.get(slug="new-one")
    assert campaign.name == "New one"
    assert set(campaign.pairs.values_list("origin", flat=True)) == {"web"}


@pytest.mark.django_db
def test_unknown_campaign_without_create(good_file):
    with pytest.raises(CommandError, match=r"campaign 'nope' does not exist \(add --create to create it\)"):
        run(str(good_file), "--campaign", "nope")
    with pytest.raises(CommandError, match="not a valid campaign slug"):
        run(str(good_file), "--campaign", "no spaces", "--create")
    assert not Campaign.objects.exists()


@pytest.mark.django_db
def test_refusal_lists_problems_on_stderr_and_stores_nothing(bad_file):
    make_campaign(slug="news")
    err = io.StringIO()
    with pytest.raises(CommandError, match=r"bad\.csv: refused \(2 problems\); nothing was stored\."):
        call_command("import_pairs", str(bad_file), "--campaign", "news", stderr=err)
    assert err.getvalue().splitlines() == [
        "line 3: source is empty",
        "line 4: id 'a' is used twice (first on line 2)",
    ]
    assert Pair.objects.count() == 0


@pytest.mark.django_db
def test_refused_file_does_not_leave_a_created_campaign(bad_file):
    with pytest.raises(CommandError):
        run(str(bad_file), "--campaign", "fresh", "--create")
    assert not Campaign.objects.filter(slug="fresh").exists()


@pytest.mark.django_db
def test_max_length_and_format_options(tmp_path):
    make_campaign(slug="news")
    path = tmp_path / "pairs.txt"
    path.write_text("source\thypothesis\nA short one.\tA much longer sentence.\n", encoding="utf-8")
    with pytest.raises(CommandError, match="refused"):
        run(str(path), "--campaign", "news", "--max-length", "15")
    out, _ = run(str(path), "--campaign", "news", "--format", "tsv", "--max-length", "100")
    assert "format: tsv" in out
    with pytest.raises(CommandError, match="--max-length must be at least 1"):
        run(str(path), "--campaign", "news", "--max-length", "0")


@pytest.mark.django_db
def test_dry_run_stores_nothing_even_with_create(good_file):
    out, _ = run(str(good_file), "--campaign", "trial", "--create", "--dry-run")
    assert out.startswith("Would create campaign 'trial'.\nWould import 2 pairs")
    assert not Campaign.objects.exists() and not Pair.objects.exists()


@pytest.mark.django_db
def test_reads_standard_input(monkeypatch):
    make_campaign(slug="news")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.encode("utf-8"))))
    out, _ = run("-", "--campaign", "news")
    assert "Imported 2 pairs" in out


@pytest.mark.django_db
def test_missing_file(tmp_path):
    make_campaign(slug="news")
    with pytest.raises(CommandError, match="refused"):
        run(str(tmp_path / "absent.csv"), "--campaign", "news")


def test_exit_status_and_messages_from_the_shell(tmp_path, good_file, bad_file):
    """The real command line: 0 and a summary on success, 1 and the problems on stderr on refusal."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(SECRET_KEY="test", PARAEVAL_DATA_DIR=str(tmp_path / "data"), DJANGO_SETTINGS_MODULE="paraeval.settings")

    def manage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )

    assert manage("migrate", "--noinput", "-v", "0").returncode == 0
    refused = manage("import_pairs", str(bad_file), "--campaign", "cli", "--create")
    assert refused.returncode == 1
    assert "line 3: source is empty" in refused.stderr
    assert "CommandError: " in refused.stderr and "nothing was stored" in refused.stderr
    assert refused.stdout == ""
    accepted = manage("import_pairs", str(good_file), "--campaign", "cli", "--create")
    assert accepted.returncode == 0, accepted.stderr
    assert "Imported 2 pairs into campaign 'cli'." in accepted.stdout


# --- pairs_created is sent after commit, only for stored pairs ------------------------------


@pytest.mark.django_db
def test_signal_waits_for_commit(good_file, django_capture_on_commit_callbacks):
    campaign = make_campaign()
    with mock.patch.object(pairs_created, "send") as send:
        with django_capture_on_commit_callbacks() as callbacks:
            report = import_file(campaign, good_file)
            send.assert_not_called()
        assert len(callbacks) == 1
        send.assert_not_called()  # the test transaction never commits
        callbacks[0]()
    send.assert_called_once_with(sender=None, pair_ids=report.pair_ids)
    assert len(report.pair_ids) == 2


@pytest.mark.django_db
def test_no_signal_for_a_refused_or_dry_run_import(good_file, bad_file, django_capture_on_commit_callbacks):
    campaign = make_campaign()
    with django_capture_on_commit_callbacks() as callbacks:
        with pytest.raises(ImportRefused):
            import_file(campaign, bad_file)
        import_file(campaign, good_file, dry_run=True)
    assert callbacks == []


@pytest.fixture
def only_our_receiver():
    """Connect a receiver to pairs_created with the other receivers (scoring) set aside."""
    received: list[tuple[list[int], int, bool]] = []

    def receiver(sender: object, pair_ids: list[int], **kwargs: object) -> None:
        # Called after commit, outside any transaction: the pairs are there to read.
        received.append((pair_ids, Pair.objects.filter(pk__in=pair_ids).count(), connection.in_atomic_block))

    with mock.patch.object(pairs_created, "receivers", []):
        pairs_created.connect(receiver, weak=False)
        yield received


@pytest.mark.django_db(transaction=True)
def test_signal_after_a_real_commit_sees_the_pairs(good_file, only_our_receiver):
    campaign = make_campaign()
    report = import_file(campaign, good_file)
    assert only_our_receiver == [(report.pair_ids, 2, False)]


@pytest.mark.django_db(transaction=True)
def test_signal_waits_for_the_callers_transaction(good_file, only_our_receiver):
    """Inside a caller's transaction (the command's --create, the API), the signal waits for
    the outer commit, and a rollback there sends nothing."""
    from django.db import transaction

    campaign = make_campaign()
    with transaction.atomic():
        import_file(campaign, good_file)
        assert only_our_receiver == []
    assert len(only_our_receiver) == 1
    with pytest.raises(RuntimeError), transaction.atomic():
        import_file(make_campaign(), good_file)
        raise RuntimeError("the caller fails after the import")
    assert len(only_our_receiver) == 1
    assert Pair.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_imports_into_one_campaign_take_turns(tmp_path, require_postgres, only_our_receiver):
    """Two imports of the same ids at the same moment: the campaign lock makes the second
    wait and then refuse every id by name, instead of failing on the unique constraint."""
    import threading

    from django.db import connections

    campaign = make_campaign(slug="busy")
    path = tmp_path / "many.csv"
    path.write_text(
        "id,source,hypothesis\n" + "".join(f"p{n},Sentence {n} here.,Sentence {n} there.\n" for n in range(3000)),
        encoding="utf-8",
    )
    barrier = threading.Barrier(2)
    outcomes: list[object] = []

    def worker() -> None:
        try:
            barrier.wait()
            outcomes.append(import_file(campaign, path))
        except ImportRefused as refused:
            outcomes.append(refused)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    reports = [outcome for outcome in outcomes if not isinstance(outcome, ImportRefused)]
    refusals = [outcome for outcome in outcomes if isinstance(outcome, ImportRefused)]
    assert len(reports) == 1 and len(refusals) == 1
    assert len(refusals[0].problems) == 3001
    assert str(refusals[0].problems[0]) == (
        "every id in the file is already in campaign 'busy': was the file imported before?"
    )
    assert str(refusals[0].problems[1]) == "line 2: id 'p0' is already in campaign 'busy'"
    assert Pair.objects.filter(campaign=campaign).count() == 3000
    assert len(only_our_receiver) == 1
