"""The planner on a campaign: the command, the API endpoint, where truth and noise come from, errors."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotate.labels import Label
from annotate.models import Pair
from scoring.analysis import planning as P
from scoring.analysis.bootstrap import DEFAULT_SEED
from scoring.models import Score
from scoring.reports.planning import PlanRequest, campaign_plan, parse_request
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_judgement, make_metric_config, make_volunteer

pytestmark = pytest.mark.django_db

POOL = 240


def planned_campaign(gold: bool = True, slug: str = "plan-me", **fields):  # type: ignore[no-untyped-def]
    """A pool of POOL pairs (40 % paraphrases), BLEU-like and LEV-like (lower is closer) scores."""
    rng = np.random.default_rng(DEFAULT_SEED)
    campaign = make_campaign(slug=slug, quota=40, **fields)
    truth = rng.random(POOL) < 0.4
    pairs = Pair.objects.bulk_create(
        Pair(
            campaign=campaign,
            external_id=f"p{i}",
            source=f"Source {i}.",
            hypothesis=f"Hypothesis {i}.",
            origin="test",
            gold_label=bool(truth[i]) if gold else None,
        )
        for i in range(POOL)
    )
    bleu = make_metric_config("bleu", label="BLEU")
    lev = make_metric_config("lev", label="LEV")
    good = 1.5 * truth + rng.normal(0, 1, POOL)
    weak = -(0.6 * truth + rng.normal(0, 1, POOL))  # LEV: lower is closer, oriented by the planner
    Score.objects.bulk_create(
        [
            Score(pair=pair, metric_config=bleu, value=float(good[i]), status=Score.Status.DONE)
            for i, pair in enumerate(pairs)
        ]
        + [
            Score(pair=pair, metric_config=lev, value=float(weak[i]), status=Score.Status.DONE)
            for i, pair in enumerate(pairs)
        ]
    )
    return campaign, pairs, truth, good, -weak


def run(*args: str) -> str:
    out = StringIO()
    call_command("plan_campaign", *args, stdout=out)
    return out.getvalue()


def test_command_prints_the_grid_with_the_cost_from_gold_truth():
    _, _, truth, good, weak = planned_campaign()
    text = run(
        "--campaign", "plan-me", "--metrics", "BLEU,LEV", "--noise", "0.1", "--pairs", "100,200", "--judges", "1,3",
        "--reward", "2", "--fee", "0.33",
    )  # fmt: skip
    lines = text.splitlines()
    assert lines[0].startswith(
        "Paired \u0394AUC of two metrics (DeLong): BLEU vs LEV, on 240 scored pool pairs. "
        "Truth: the pool's gold labels; "
    )
    assert "Noise: assumed: each judge gives the wrong answer with probability 0.1. " in lines[0]
    assert lines[0].endswith("Cost: participants (40 pairs each) x reward 2 x (1 + fee 0.33).")
    assert lines[1].split() == [
        "Pairs", "Judges", "per", "pair", "Judgements", "Labelled", "pairs", "Expected", "difference",
        "Interval", "width", "Power,", "fixed", "design", "Power,", "confidence", "sequence", "Power,",
        "group-sequential", "(its", "maximum", "pairs)", "Participants", "Cost",
    ]  # fmt: skip
    assert "Power, fixed design: one test after exactly that many pairs (not what a stopping rule gives)." in lines[0]
    # The same figures as the statistics on the same arrays (oriented, gold as the truth).
    data = P.PlanInput(["BLEU", "LEV"], np.vstack([good, weak]), truth.astype(float), P.NoiseModel.from_flip(0.1))
    plan = P.plan(data, P.Question.AUC, [100, 200], [1, 3], pairs_per_participant=40, reward=2.0, fee=0.33)
    cell = plan.cell(200, 3)
    row = next(line.split() for line in lines[2:] if line.split()[:2] == ["200", "3"])
    assert row == [
        "200", "3", "600", "200", f"{cell.difference:+.3f}".replace("-", "\u2212"), f"{cell.width:.3f}",
        f"{cell.power:.2f}", f"{cell.power_sequence:.2f}", f"{cell.power_group_sequential:.2f}",
        f"({cell.group_sequential_max})", "15", f"{15 * 2 * 1.33:.2f}",
    ]  # fmt: skip
    # The rules' own power is below the fixed design's at the same size (the confidence sequence's
    # far below: it is wider), and the group-sequential plan runs to a few more pairs.
    assert cell.power_sequence < cell.power_group_sequential <= cell.power + 0.01
    assert 200 < cell.group_sequential_max <= 210
    assert len(lines) == 2 + 4 + 2
    sizes = {size.judges: size for size in plan.sizes}
    assert lines[-1] == (
        f"Power 0.8 with 3 judges per pair: fixed design {sizes[3].fixed} pairs; confidence sequence (stopping "
        f"rule, read after every judgement) {sizes[3].sequence} pairs; group-sequential (5 looks) "
        f"{sizes[3].group_sequential} pairs at most (planned at {sizes[3].group_sequential_planned})."
    )


def test_command_refuses_unknown_campaign_metric_and_bad_numbers():
    planned_campaign()
    with pytest.raises(CommandError, match="no campaign with slug 'nope'"):
        run("--campaign", "nope", "--metrics", "BLEU,LEV", "--noise", "0.1")
    with pytest.raises(CommandError, match=r"metrics: 'chrf' has no scores in this campaign \(scored: BLEU, LEV\)"):
        run("--campaign", "plan-me", "--metrics", "BLEU,chrf", "--noise", "0.1")
    with pytest.raises(CommandError, match="question: one of auc, correlation, clusters, got 'rank'"):
        run("--campaign", "plan-me", "--metrics", "BLEU,LEV", "--question", "rank")
    with pytest.raises(CommandError, match=r"pairs: whole numbers separated by commas, e.g. 100,200,400; got '1e3'"):
        run("--campaign", "plan-me", "--metrics", "BLEU,LEV", "--noise", "0.1", "--pairs", "1e3")
    with pytest.raises(CommandError, match="pairs: 400 is more than the 240 scored pairs of the pool"):
        run("--campaign", "plan-me", "--metrics", "BLEU,LEV", "--noise", "0.1", "--pairs", "400")
    with pytest.raises(CommandError, match="noise: give the flip probability of one judge"):
        run("--campaign", "plan-me", "--metrics", "BLEU,LEV")
    with pytest.raises(CommandError, match="the auc question compares exactly two metrics, got 1"):
        run("--campaign", "plan-me", "--metrics", "BLEU", "--noise", "0.1")


def test_clusters_take_every_metric_and_correlation_answers_in_json():
    planned_campaign()
    body = json.loads(run("--campaign", "plan-me", "--question", "clusters", "--noise", "0.2", "--json"))
    assert body["metrics"] == ["BLEU", "LEV"] and body["question"] == "clusters"
    assert [(c["pairs"], c["judges"]) for c in body["cells"]][:3] == [(100, 1), (100, 3), (100, 5)]
    body = json.loads(
        run("--campaign", "plan-me", "--question", "correlation", "--metrics", "LEV,BLEU", "--noise", "0.2", "--json")
    )
    assert body["metrics"] == ["LEV", "BLEU"] and body["true_difference"] < 0
    assert body["noise"] == 0.2 and body["noise_source"] == "assumed" and body["truth_source"] == "gold"


def test_no_label_uses_the_metrics_consensus_and_a_pilot_replaces_it_with_its_noise():
    campaign, pairs, truth, _, _ = planned_campaign(gold=False)
    result = campaign_plan(campaign, PlanRequest(metrics=("BLEU", "LEV"), noise=0.1, pairs=(100,), judges=(1,)))
    assert result.plan.truth_source == "consensus"
    # A pilot: three judges on 60 pairs, each right 80 % of the time.
    rng = np.random.default_rng(DEFAULT_SEED)
    judges = [make_volunteer(campaign) for _ in range(3)]
    for i in range(60):
        for volunteer in judges:
            says = truth[i] if rng.random() < 0.8 else not truth[i]
            make_judgement(pairs[i], volunteer, Label.SAME_MEANING if says else Label.VERY_DIFFERENT)
    result = campaign_plan(campaign, PlanRequest(metrics=("BLEU", "LEV"), pairs=(100,), judges=(1,)))
    assert result.plan.truth_source == "pilot"
    assert result.plan.noise.source == "pilot"
    assert 0.7 < result.plan.noise.judge_accuracy < 0.9
    assert result.truth_words == "the campaign's pilot: 60 labelled pairs, the labels' noise taken out"


def test_parse_request_names_the_parameter():
    assert parse_request({"pairs": "100, 300", "judges": "3", "noise": "0.15"}) == PlanRequest(
        pairs=(100, 300), judges=(3,), noise=0.15
    )
    for params, words in [
        ({"noise": "0.5"}, "noise: the flip probability of one judge, from 0 to 0.49; got '0.5'"),
        ({"noise": "much"}, "noise: a number, got 'much'"),
        ({"judges": "0"}, "judges: each number from 1 to 25, got '0'"),
        ({"reward": "-1"}, "reward: the payment per participant, 0 or more; got '-1'"),
        ({"alpha": "nan"}, "alpha: a finite number, got 'nan'"),
    ]:
        with pytest.raises(P.PlanError) as caught:
            parse_request(params)
        assert str(caught.value) == words


def test_api_answers_the_plan_and_refuses_bad_input_with_4xx(staff_api, django_user_model):  # type: ignore[no-untyped-def]
    planned_campaign()
    url = "/api/campaigns/plan-me/plan/"
    answer = staff_api.get(url, {"metrics": "BLEU,LEV", "noise": "0.1", "pairs": "100,200", "judges": "1,3"})
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["campaign"] == "plan-me" and body["question"] == "auc"
    assert [(c["pairs"], c["judges"]) for c in body["cells"]] == [(100, 1), (100, 3), (200, 1), (200, 3)]
    assert body["cells"][0]["cost"] is None and body["pairs_per_participant"] == 40
    # Beside the fixed design's power, each stopping rule's own, and the sizes for power 0.8.
    assert {"power", "power_sequence", "power_group_sequential", "group_sequential_max"} <= set(body["cells"][0])
    assert body["looks"] == 5
    assert [size["judges"] for size in body["sizes"]] == [1, 3]
    three = body["sizes"][1]
    assert three["fixed"] < three["group_sequential"] < three["sequence"]
    assert three["sequence_power"] >= 0.8 and three["group_sequential_power"] >= 0.8
    bad = staff_api.get(url, {"metrics": "BLEU,chrf", "noise": "0.1"})
    assert bad.status_code == 409  # the campaign cannot answer as it stands
    assert bad.json() == {"detail": "metrics: 'chrf' has no scores in this campaign (scored: BLEU, LEV)"}
    assert staff_api.get(url, {"metrics": "BLEU,LEV", "noise": "x"}).json() == {
        "noise": ["A valid number is required."]
    }
    assert staff_api.get(url, {"metrics": "BLEU,LEV", "pairs": "100, 200"}).status_code == 400
    assert staff_api.get(url, {"metrics": "BLEU,LEV", "noise": ""}).status_code == 400
    assert staff_api.get("/api/campaigns/nope/plan/", {"noise": "0.1"}).status_code == 404


def test_settings_page_shows_the_grid_for_the_chosen_metrics(client):  # type: ignore[no-untyped-def]
    from tests.builders import make_staff

    planned_campaign()
    client.force_login(make_staff("planner-owner", teams=("Lab",)))
    url = "/staff/campaigns/plan-me/settings/"
    page = client.get(url)
    assert page.status_code == 200
    text = page.content.decode()
    assert '<h2 id="plan-title">Plan the campaign\'s size</h2>' in text
    assert 'id="plan-grid"' not in text  # nothing computed until asked
    query = {
        "plan": "1", "plan-question": "auc", "plan-a": "BLEU", "plan-b": "LEV", "plan-noise": "0.1",
        "plan-pairs": "100,200", "plan-judges": "1,3", "plan-reward": "2", "plan-fee": "0.33",
    }  # fmt: skip
    page = client.get(url, query)
    assert page.status_code == 200
    grid = page.context["plan_rows"]
    assert [[value for _, value in row][:3] for row in grid] == [
        ["100", "1", "100"], ["100", "3", "300"], ["200", "1", "200"], ["200", "3", "600"]
    ]  # fmt: skip
    assert [value for _, value in grid[3]][-2:] == ["15", "39.90"]
    assert 'data-label="Power, fixed design:">' in page.content.decode()
    assert 'data-label="Power, confidence sequence:">' in page.content.decode()
    assert page.context["plan_sizes"][0].startswith("Power 0.8 with 1 judge per pair: fixed design ")
    assert page.context["plan_summary"].startswith("Paired \u0394AUC of two metrics (DeLong): BLEU vs LEV, on 240 ")
    bad = client.get(url, {**query, "plan-b": "BLEU"})
    assert bad.status_code == 400
    assert "metrics: &#x27;BLEU&#x27; is named twice" in bad.content.decode()
