"""The researcher's command line: --metrics, --meta, full-precision CSV, and scoring a subset."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.management import CommandError, call_command

from scoring.models import Score
from tests.builders import make_campaign, make_pair, make_scored_campaign

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("evaluate_metrics", *args, stdout=out)
    return out.getvalue()


def test_metrics_filter_meta_tables_and_full_precision_csv():
    scored = make_scored_campaign(pairs_per_origin=6)
    text = run(
        "--campaign", scored.campaign.slug, "--metrics", "LEV,BLEU", "--meta", "--resamples", "50", "--format", "csv"
    )
    rows = list(csv.DictReader(io.StringIO(text)))
    table1 = {row["row"] for row in rows if row["table"] == "table1"}
    assert table1 == {"LEV ↓", "BLEU ↑"}
    paired = [row for row in rows if row["table"] == "meta_paired"]
    assert {row["row"] for row in paired} == {"BLEU ↑ vs LEV ↓"}
    assert {row["statistic"] for row in paired} >= {"ROC AUC", "Pearson r", "Kendall τ_b"}
    assert any(row["table"] == "meta_matrix_auc" for row in rows)
    # Full precision: a value has more than the 3 decimals shown in its text.
    means = [row for row in rows if row["table"] == "ranking" and row["statistic"] == "ROC AUC" and row["value"]]
    assert any(len(row["value"].split(".")[-1]) > 3 for row in means)


def test_unknown_metric_is_refused():
    scored = make_scored_campaign(pairs_per_origin=2)
    with pytest.raises(CommandError, match="--metrics: no metric configuration 'nope'"):
        run("--campaign", scored.campaign.slug, "--metrics", "nope", "--resamples", "0")


def test_score_pairs_subset_by_ids_origin_and_limit():
    campaign = make_campaign()
    pairs = [
        make_pair(campaign, origin="a" if i < 3 else "b", source=f"A cat {i}.", hypothesis=f"A dog {i}.")
        for i in range(5)
    ]
    out = io.StringIO()
    call_command(
        "score_pairs",
        "--campaign",
        campaign.slug,
        "--metrics",
        "lev",
        "--ids",
        f"{pairs[0].pk},{pairs[4].pk}",
        "--no-progress",
        stdout=out,
    )
    assert sorted(Score.objects.values_list("pair_id", flat=True)) == [pairs[0].pk, pairs[4].pk]
    call_command(
        "score_pairs",
        "--campaign",
        campaign.slug,
        "--metrics",
        "lev",
        "--origin",
        "a",
        "--limit",
        "2",
        "--no-progress",
        stdout=out,
    )
    assert sorted(Score.objects.values_list("pair_id", flat=True)) == [pairs[0].pk, pairs[1].pk, pairs[4].pk]
    with pytest.raises(CommandError, match="no pair of campaign"):
        call_command("score_pairs", "--campaign", campaign.slug, "--metrics", "lev", "--origin", "zzz", "--no-progress")
    with pytest.raises(CommandError, match="--ids: expected comma-separated integers"):
        call_command("score_pairs", "--campaign", campaign.slug, "--metrics", "lev", "--ids", "x", "--no-progress")


def _tables_only(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_ids_select_the_same_analysis_as_the_origin_they_cover(tmp_path):
    scored = make_scored_campaign(pairs_per_origin=6)
    slug = scored.campaign.slug
    mrpc = [pair.pk for pair in scored.pairs if pair.origin == "mrpc"]
    by_origin = run("--campaign", slug, "--origin", "mrpc", "--resamples", "40", "--format", "csv")
    # Half the ids on the command line, half in a file (one per line, a comment, a comma list).
    listing = tmp_path / "ids.txt"
    listing.write_text(f"# the mrpc pairs\n{mrpc[3]}\n{mrpc[4]}, {mrpc[5]}  # last ones\n\n", encoding="utf-8")
    by_ids = run(
        "--campaign",
        slug,
        "--ids",
        ",".join(map(str, mrpc[:3])),
        "--ids-file",
        str(listing),
        "--resamples",
        "40",
        "--format",
        "csv",
    )
    assert _tables_only(by_ids) == _tables_only(by_origin)
    markdown = run("--campaign", slug, "--ids", f"{mrpc[0]},{mrpc[1]}", "--resamples", "0")
    assert "2 pairs (" in markdown and "6 judgements from" in markdown and "Filters: 2 pair ids." in markdown
    # Ids and origin together: the pairs of both.
    paws = [pair.pk for pair in scored.pairs if pair.origin == "paws"]
    with pytest.raises(CommandError, match=r"no pair of campaign .* matches --ids/--ids-file and --origin"):
        run("--campaign", slug, "--ids", str(paws[0]), "--origin", "mrpc", "--resamples", "0")


def test_bad_ids_are_named(tmp_path):
    scored = make_scored_campaign(pairs_per_origin=2)
    slug = scored.campaign.slug
    other = make_pair(make_campaign())
    with pytest.raises(CommandError, match=r"--ids: not a pair id: 'x12'"):
        run("--campaign", slug, "--ids", "x12")
    listing = tmp_path / "ids.txt"
    listing.write_text(f"{scored.pairs[0].pk}\n3.5\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"--ids-file line 2: not a pair id: '3.5'"):
        run("--campaign", slug, "--ids-file", str(listing))
    with pytest.raises(CommandError, match=rf"not pairs of campaign '{slug}': {other.pk}$"):
        run("--campaign", slug, "--ids", f"{scored.pairs[0].pk},{other.pk}")
    with pytest.raises(CommandError, match="cannot read"):
        run("--campaign", slug, "--ids-file", str(tmp_path / "missing.txt"))


def test_meta_states_the_smallest_reachable_p_beside_each_matrix():
    scored = make_scored_campaign(pairs_per_origin=6)
    text = run("--campaign", scored.campaign.slug, "--metrics", "LEV,BLEU,BERTScore", "--meta", "--resamples", "50")
    assert "DeLong test (analytic): no resampling floor on its p-values." in text
    # Three metrics: 3 comparisons, Holm x 3, resamples chosen so that 3 x 2/(R + 1) = 0.01.
    note = "Permutation test, 599 resamples: the smallest reachable Holm-adjusted p over 3 comparisons is 0.01."
    heat_map = text.split("### Paired p-values — Spearman")[1].split("###")[0]
    assert note in heat_map
    forced = run(
        *("--campaign", scored.campaign.slug, "--metrics", "LEV,BLEU,BERTScore", "--meta", "--resamples", "50"),
        *("--permutation-resamples", "100"),
    )
    assert (
        "Permutation test, 100 resamples: the smallest reachable Holm-adjusted p over 3 comparisons is 0.0594. "
        "No difference can reach p < 0.05: raise the permutation resamples to at least 599 (6.0 x)."
    ) in forced
