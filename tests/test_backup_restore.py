"""backup_campaign / restore_campaign: a campaign restored into a fresh installation, every row and
every timestamp exactly as it was (Django's dumpdata keeps milliseconds only)."""

from __future__ import annotations

import datetime
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from annotate import allocation
from annotate.backup import plan
from annotate.models import Campaign, CorpusObjective, Judgement
from annotate.tallies import CampaignCounts, counted, tally
from scoring.models import MetricConfig, QueuedScore, Score, ScoreTally
from tests.builders import make_campaign, make_pair, make_scored_campaign, make_volunteer

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parent.parent


def build() -> Campaign:
    """A judged, scored campaign with reservations, and timestamps with odd microseconds."""
    scored = make_scored_campaign(slug="kept", pairs_per_origin=4)
    campaign = scored.campaign
    allocation.next_assignment(make_volunteer(campaign))  # an open reservation
    moment = datetime.datetime(2026, 3, 4, 5, 6, 7, 123457, tzinfo=datetime.UTC)
    Judgement.objects.filter(pair__campaign=campaign).update(answered_at=moment)
    Score.objects.filter(pair__campaign=campaign).update(computed_at=moment + datetime.timedelta(microseconds=1))
    # Tables other features hang on a campaign are found by the backup too (PARAPHRASUS objectives).
    CorpusObjective.objects.create(campaign=campaign, origin="mrpc", objective=CorpusObjective.Objective.CLASSIFY)
    return campaign


def snapshot() -> dict[str, list[dict[str, Any]]]:
    """Every row of every table a backup covers, all columns, in id order."""
    owned, referred = plan()
    return {
        model._meta.label_lower: list(model._default_manager.order_by("pk").values()) for model in [*referred, *owned]
    }


def backup(slug: str, path: Path) -> str:
    out = io.StringIO()
    call_command("backup_campaign", "--campaign", slug, "--output", str(path), stdout=out)
    return out.getvalue()


def restore(path: Path) -> str:
    out = io.StringIO()
    call_command("restore_campaign", str(path), stdout=out)
    return out.getvalue()


def empty_the_installation() -> None:
    Campaign.objects.all().delete()  # cascades to pairs, volunteers, assignments, judgements, scores
    MetricConfig.objects.all().delete()
    QueuedScore.objects.all().delete()


@pytest.mark.parametrize("name", ["kept.jsonl", "kept.jsonl.gz"])
def test_backup_then_restore_into_an_empty_database_gives_every_row_back_exactly(tmp_path: Path, name: str) -> None:
    build()
    before = snapshot()
    assert {table: len(rows) > 0 for table, rows in before.items()} == {
        "scoring.metricconfig": True,
        "annotate.campaign": True,
        "annotate.pair": True,
        "annotate.volunteer": True,
        "annotate.assignment": True,
        "annotate.judgement": True,
        "scoring.score": True,
        "annotate.corpusobjective": True,
        "annotate.pairupload": False,  # no upload in this campaign: the table is still covered
        "scoring.tunedjudge": False,  # no tuned judge either (its adapters are files: see the docs)
        "scoring.generationrun": False,  # no generation request in this campaign
        "scoring.probeset": False,  # not a probe set (a probe set's own campaign backs up its probes)
        "scoring.probepair": False,
        "scoring.stoppingrule": False,  # no question fixed in this campaign: the table is still covered
    }
    said = backup("kept", tmp_path / name)
    assert said.startswith(f"Backed up campaign 'kept' to {tmp_path / name}: ")
    empty_the_installation()
    assert all(not rows for rows in snapshot().values())

    said = restore(tmp_path / name)
    assert said.splitlines()[0].startswith("Restored campaign 'kept': ")
    after = snapshot()
    for table, rows in before.items():
        for old, new in zip(rows, after[table], strict=True):
            assert {k: (v, new[k]) for k, v in old.items() if new[k] != v} == {}, table
    assert after == before  # every column of every row, ids and microseconds included
    assert after["annotate.judgement"][0]["answered_at"].microsecond == 123457
    # The kept counters are not in the file: the restore's inserts fired the triggers.
    restored = Campaign.objects.get(slug="kept")
    assert tally(restored) == counted(restored) != CampaignCounts()
    scores = Score.objects.filter(pair__campaign=restored, pair__is_training=False)
    kept = {row.metric_config_id: (row.done, row.failed) for row in ScoreTally.objects.filter(campaign=restored)}
    assert (
        kept
        == {
            config: (
                scores.filter(metric_config=config, status="done").count(),
                scores.filter(metric_config=config, status="failed").count(),
            )
            for config in set(scores.values_list("metric_config_id", flat=True))
        }
        != {}
    )
    # The sequences moved past the restored ids: new rows still insert.
    make_pair(Campaign.objects.get(slug="kept"))


def test_dumpdata_loses_the_microseconds_that_backup_keeps(tmp_path: Path) -> None:
    build()
    out = io.StringIO()
    call_command("dumpdata", "annotate.judgement", stdout=out)
    assert {row["fields"]["answered_at"] for row in json.loads(out.getvalue())} == {"2026-03-04T05:06:07.123Z"}
    backup("kept", tmp_path / "kept.jsonl")
    assert '"2026-03-04T05:06:07.123457+00:00"' in (tmp_path / "kept.jsonl").read_text()


def test_restore_into_an_installation_with_rows_renumbers_and_shares_configurations(tmp_path: Path) -> None:
    campaign = build()
    judgements = sorted(
        Judgement.objects.filter(pair__campaign=campaign).values_list(
            "pair__external_id", "volunteer__token", "label", "shown_at", "answered_at"
        )
    )
    scores = sorted(
        Score.objects.filter(pair__campaign=campaign).values_list(
            "pair__external_id", "metric_config__config_hash", "value", "status", "computed_at"
        )
    )
    backup("kept", tmp_path / "kept.jsonl")
    campaign.delete()  # the configurations stay: the restore reuses them
    other = make_campaign(slug="other")
    make_pair(other)
    make_volunteer(other)

    said = restore(tmp_path / "kept.jsonl")
    assert "4 metric configurations were already here and are shared." in said
    assert "New ids (this installation had rows already): annotate.campaign, annotate.pair, annotate.volunteer." in said
    restored = Campaign.objects.get(slug="kept")
    assert (
        sorted(
            Judgement.objects.filter(pair__campaign=restored).values_list(
                "pair__external_id", "volunteer__token", "label", "shown_at", "answered_at"
            )
        )
        == judgements
    )
    assert (
        sorted(
            Score.objects.filter(pair__campaign=restored).values_list(
                "pair__external_id", "metric_config__config_hash", "value", "status", "computed_at"
            )
        )
        == scores
    )
    assert MetricConfig.objects.count() == 4


def test_refusals_name_the_problem_and_store_nothing(tmp_path: Path) -> None:
    build()
    backup("kept", tmp_path / "kept.jsonl")
    with pytest.raises(CommandError, match="nothing restored: a campaign 'kept' already exists here"):
        restore(tmp_path / "kept.jsonl")
    with pytest.raises(CommandError, match="no campaign 'nope'"):
        backup("nope", tmp_path / "nope.jsonl")
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"hello": 1}\n')
    with pytest.raises(CommandError, match=r"junk.jsonl is not a campaign backup \(no 'paraeval-campaign-backup'"):
        restore(junk)
    # A row that cannot be stored (a volunteer's token taken by another campaign): all or nothing.
    lines = (tmp_path / "kept.jsonl").read_text().splitlines()
    Campaign.objects.filter(slug="kept").update(slug="moved")
    pairs_before = snapshot()["annotate.pair"]
    with pytest.raises(CommandError, match="nothing restored: the backup conflicts with this installation's rows"):
        restore(tmp_path / "kept.jsonl")
    assert snapshot()["annotate.pair"] == pairs_before
    assert not Campaign.objects.filter(slug="kept").exists()
    assert len(lines) > 10


def test_a_fresh_sqlite_installation_restores_the_same_rows(tmp_path: Path) -> None:
    """Back up here, restore into a new installation (its own data folder and SQLite database) in
    a fresh shell, back up there: the two files hold the same rows, byte for byte."""
    build()
    backup("kept", tmp_path / "here.jsonl")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(fresh), "PARAEVAL_DATA_DIR": str(fresh), "SECRET_KEY": "x"}

    def manage(*args: str) -> None:
        result = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
        )
        assert result.returncode == 0, result.stderr

    manage("migrate", "--noinput")
    manage("restore_campaign", str(tmp_path / "here.jsonl"))
    manage("backup_campaign", "--campaign", "kept", "--output", str(tmp_path / "there.jsonl"))
    here = (tmp_path / "here.jsonl").read_text().splitlines()
    there = (tmp_path / "there.jsonl").read_text().splitlines()
    assert here[1:] == there[1:]  # all but the header's created_at
    assert len(here) > 100


def test_the_owning_team_travels_by_its_name_to_an_installation_without_it(tmp_path: Path) -> None:
    from django.contrib.auth.models import Group

    campaign = build()
    assert campaign.team is not None
    team_name = campaign.team.name
    backup("kept", tmp_path / "kept.jsonl")
    empty_the_installation()
    Group.objects.all().delete()  # another installation: no group of that name, other ids
    Group.objects.create(name="Someone else's")

    restore(tmp_path / "kept.jsonl")

    restored = Campaign.objects.select_related("team").get(slug="kept")
    assert restored.team is not None and restored.team.name == team_name
    assert set(Group.objects.values_list("name", flat=True)) == {"Someone else's", team_name}
