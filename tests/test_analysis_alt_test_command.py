"""`evaluate_metrics --meta` prints the alternative annotator test, checked against the reference."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.management import CommandError, call_command

from annotate.labels import is_paraphrase
from annotate.models import Judgement
from scoring.models import Score
from tests.builders import make_scored_campaign
from tests.test_analysis_alt_test import reference_alt_test

pytestmark = pytest.mark.django_db
PARAPLUIE = "ParaPLUIE FS-DIRECT"


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("evaluate_metrics", *args, stdout=out)
    return out.getvalue()


def test_meta_prints_the_alt_test_as_the_reference_computes_it():
    scored = make_scored_campaign(pairs_per_origin=25)
    text = run("--campaign", scored.campaign.slug, "--metrics", PARAPLUIE, "--meta", "--resamples", "20")
    csv_text = run(
        *("--campaign", scored.campaign.slug, "--metrics", PARAPLUIE, "--meta", "--resamples", "20"),
        *("--format", "csv", "--aat-epsilon", "0.2"),
    )
    judgements = []
    for judgement in Judgement.objects.filter(pair__campaign=scored.campaign, is_training=False):
        reading = is_paraphrase(judgement.label)
        judgements.append((judgement.pair_id, judgement.volunteer_id, -1 if reading is None else int(reading)))
    config = scored.configs["parapluie"]
    # ParaPLUIE's natural threshold: a paraphrase when the log-odds score is >= 0.
    decisions = {s.pair_id: int(s.value >= 0) for s in Score.objects.filter(metric_config=config)}
    _, _, rate = reference_alt_test(judgements, decisions, 0.1, 0.05, 30)
    per_judge, rejected, rate_02 = reference_alt_test(judgements, decisions, 0.2, 0.05, 30)
    assert len(per_judge) >= 3
    assert "### Can this metric replace a volunteer?\n" in text
    assert "cost-benefit margin ε = 0.1?" in text
    verdict = "yes" if rate >= 0.5 else "no"
    assert f"| {PARAPLUIE} ↑ | {len(per_judge)} | {rate:.3f} | {verdict} |" in text
    rows = [row for row in csv.DictReader(io.StringIO(csv_text)) if row["table"] == "meta_alt_test_judges"]
    p_values = {row["statistic"]: float(row["value"]) for row in rows if row["column"] == "p"}
    assert p_values == pytest.approx({f"volunteer {j}": value[2] for j, value in per_judge.items()}, rel=1e-9)
    summary = [row for row in csv.DictReader(io.StringIO(csv_text)) if row["table"] == "meta_alt_test"]
    assert float(next(r["value"] for r in summary if r["column"] == "Winning rate ω")) == pytest.approx(rate_02)
    assert {row["statistic"]: row["text"] for row in rows if row["column"] == "Rejected"} == {
        f"volunteer {j}": "yes" if r else "no" for j, r in rejected.items()
    }


def test_meta_says_when_the_alt_test_cannot_run():
    scored = make_scored_campaign(pairs_per_origin=4)
    text = run("--campaign", scored.campaign.slug, "--metrics", PARAPLUIE, "--meta", "--resamples", "20")
    assert (
        "_Not run: 0 judge(s) answered at least 30 pairs that another judge also answered; the alternative "
        "annotator test needs 3 or more (leave one out, compare with the others)._"
    ) in text
    with pytest.raises(CommandError, match=r"--aat-epsilon must be in \[0, 1\): 1.5"):
        run("--campaign", scored.campaign.slug, "--meta", "--aat-epsilon", "1.5")
