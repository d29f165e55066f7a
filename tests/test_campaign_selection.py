"""Adaptive selection of the next pairs: the planned order, the allocator walking it, the setting's
validation, and the weighted figures the dashboard shows for an adaptive campaign."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError

from annotate import allocation, flow
from annotate.labels import Label
from annotate.models import Campaign, Pair, Volunteer
from scoring.analysis import selection
from scoring.reports.service import shared_cache
from scoring.reports.tables import fmt
from scoring.selection import SelectionError, plan_selection
from tests.builders import (
    make_campaign,
    make_judgement,
    make_metric_config,
    make_pair,
    make_score,
    make_scored_campaign,
    make_staff,
    make_volunteer,
)

pytestmark = pytest.mark.django_db

SEED = 20250101


def scored_pool(campaign: Campaign, a: list[float], b: list[float]) -> list[Pair]:
    first, second = make_metric_config("bleu", label="BLEU"), make_metric_config("chrf", label="chrF")
    pairs = []
    for x, y in zip(a, b, strict=True):
        pair = make_pair(campaign)
        make_score(pair, first, x)
        make_score(pair, second, y)
        pairs.append(pair)
    return pairs


def hand_ranks(values: list[float]) -> np.ndarray:
    """Rank-normalised scores without ties: position in sorted order over (n - 1)."""
    order = sorted(values)
    return np.array([order.index(value) / (len(values) - 1) for value in values])


def test_the_plan_weights_pairs_by_influence_and_the_allocator_serves_them_by_key(settings) -> None:
    settings.PARAEVAL_SEED = SEED
    campaign = make_campaign(selection="adaptive", judges_per_pair=1, quota=50)
    a = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    b = [0.1, 0.8, 0.3, 0.2, 0.5, 0.7, 0.6, 0.4]
    pairs = scored_pool(campaign, a, b)
    plan = plan_selection(campaign)
    assert (plan.pairs, plan.metrics, plan.floor, plan.unscored) == (8, ["BLEU", "chrF"], 0.1, 0)
    # The label-free guess of each pair's class: its mean rank-normalised score (no ties here).
    guess = np.clip((hand_ranks(a) + hand_ranks(b)) / 2, 0.02, 0.98)
    assert selection.paraphrase_probability(np.vstack([a, b])) == pytest.approx(guess)
    size = selection.expected_influence(np.vstack([a, b]), guess)
    expected_q = 0.1 + 0.9 * size / size.max()
    stored = {pair.pk: pair for pair in Pair.objects.filter(campaign=campaign)}
    for pair, q in zip(pairs, expected_q, strict=True):
        row = stored[pair.pk]
        assert row.selection_probability == pytest.approx(q)
        u = selection.uniform_draw(SEED, campaign.slug, pair.pk)
        assert row.selection_key == pytest.approx(u / q)
    by_key = [pk for pk, _ in sorted(((p.pk, p.selection_key) for p in stored.values()), key=lambda item: item[1])]
    by_shuffle = list(Pair.objects.filter(campaign=campaign).order_by("shuffle_key").values_list("pk", flat=True))
    assert by_shuffle == by_key
    # Two volunteers in turn: together they walk the planned order from its start.
    served = []
    for _ in range(2):
        volunteer = Volunteer.objects.select_related("campaign").get(pk=make_volunteer(campaign).pk)
        for _ in range(4):
            assignment = allocation.next_assignment(volunteer).assignment
            assert assignment is not None
            served.append(assignment.pair_id)
            assert flow.record_answer(volunteer, assignment.pair_id, Label.SAME_MEANING.value).outcome.value
    assert served == by_key


def test_the_plan_is_refused_once_volunteers_judged_and_names_unknown_metrics() -> None:
    campaign = make_campaign(slug="judged", selection="adaptive", selection_metrics="bleu, meteor")
    pairs = scored_pool(campaign, [0.1, 0.2], [0.2, 0.1])
    with pytest.raises(SelectionError) as error:
        plan_selection(campaign)
    assert str(error.value) == (
        "metric 'meteor' has no scores in campaign 'judged' (metrics scored: bleu, chrf); "
        "score the pairs first or name other metrics"
    )
    make_judgement(pairs[0])
    with pytest.raises(SelectionError, match="already has judgements: its order cannot be planned again"):
        plan_selection(campaign)


def test_the_command_plans_and_says_what_it_did(settings) -> None:
    settings.PARAEVAL_SEED = SEED
    campaign = make_campaign(slug="cmd", selection="adaptive")
    scored_pool(campaign, [0.1, 0.2, 0.3], [0.3, 0.2, 0.1])
    out = io.StringIO()
    call_command("plan_selection", "--campaign", "cmd", stdout=out)
    assert out.getvalue().strip() == (
        "Planned 3 pairs of cmd: compared BLEU, chrF; draw weights from 0.10 to 1 (floor 0.1); "
        "0 pairs not scored by every compared metric come early with weight 1."
    )
    Campaign.objects.filter(pk=campaign.pk).update(selection="balanced")
    with pytest.raises(CommandError, match="uses the balanced order: set its selection to adaptive first"):
        call_command("plan_selection", "--campaign", "cmd")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "bleu",
            "name exactly two metrics separated by a comma, e.g. 'bleu, bertscore' (or none for all metrics); "
            "got 1: bleu",
        ),
        ("bleu, bleu", "the two metrics must differ; got 'bleu' twice"),
    ],
)
def test_the_compared_metrics_are_validated_with_a_message(text: str, message: str) -> None:
    campaign = make_campaign(selection_metrics=text)
    with pytest.raises(ValidationError) as error:
        campaign.full_clean()
    assert error.value.message_dict == {"selection_metrics": [message]}


def test_the_selection_cannot_change_once_volunteers_judged() -> None:
    campaign = make_campaign()
    pair = make_pair(campaign)
    campaign.selection = "adaptive"
    campaign.full_clean()  # nothing judged yet: allowed
    make_judgement(pair)
    with pytest.raises(ValidationError) as error:
        campaign.full_clean()
    assert error.value.message_dict["selection"] == [
        "The selection cannot change once volunteers have judged campaign pairs: the pairs judged so far were "
        "drawn with the current one, and the statistics weight them by it. Clone the campaign to start one "
        "with another selection."
    ]


def test_the_settings_page_offers_the_setting_and_explains_refusals(client) -> None:
    client.force_login(make_staff("boss", "pw-for-tests", superuser=True))
    campaign = make_campaign(slug="study", name="Study")
    scored_pool(campaign, [0.1, 0.2, 0.3], [0.3, 0.1, 0.2])
    page = client.get("/staff/campaigns/study/settings/").content.decode()
    assert 'data-setting="selection"' in page and 'data-setting="selection_metrics"' in page
    form = {
        "name": "Study",
        "language": "en",
        "judges_per_pair": "1",
        "quota": "20",
        "reservation_minutes": "20",
        "selection": "adaptive",
        "selection_metrics": "bleu, meteor",
        "is_open": "on",
    }
    response = client.post("/staff/campaigns/study/settings/", form)
    assert response.status_code == 400  # the form again, with the message under the field
    assert (
        "No scores of &#x27;meteor&#x27; in this campaign; the metrics that scored its pairs are: bleu, chrf."
        in response.content.decode()
    )
    form["selection_metrics"] = "bleu, chrf"
    assert client.post("/staff/campaigns/study/settings/", form).status_code == 302
    campaign.refresh_from_db()
    assert (campaign.selection, campaign.selection_metrics) == ("adaptive", "bleu, chrf")
    # Saving planned the order from the scores.
    assert not Pair.objects.filter(campaign=campaign, selection_probability__isnull=True).exists()


def loop_auc(scores: np.ndarray, positive: np.ndarray, w: np.ndarray) -> float:
    num = den = 0.0
    for i in np.flatnonzero(positive):
        for j in np.flatnonzero(~positive):
            num += w[i] * w[j] * (1.0 if scores[i] > scores[j] else 0.5 if scores[i] == scores[j] else 0.0)
            den += w[i] * w[j]
    return num / den


def test_the_dashboard_shows_weighted_figures_for_an_adaptive_campaign(client) -> None:
    cache.clear()
    shared_cache().clear()
    client.force_login(make_staff("staff", "pw-for-tests", superuser=True))
    built = make_scored_campaign(slug="adapt", name="Adaptive", selection="adaptive")
    pairs = list(Pair.objects.filter(campaign=built.campaign, is_training=False).order_by("id"))
    q = np.array([0.1 + 0.9 * (index % 5) / 4 for index in range(len(pairs))])
    keys = np.array([(index + 1) / 100 for index in range(len(pairs))]) / q
    for pair, weight, key in zip(pairs, q, keys, strict=True):
        Pair.objects.filter(pk=pair.pk).update(selection_probability=weight, selection_key=key)
    # One pool pair not judged yet (its key last): the judged pairs are a sample, weighted.
    waiting = make_pair(built.campaign, selection_probability=0.1, selection_key=keys.max() + 1)
    body = client.get("/staff/dashboard/data/", {"campaign": "adapt", "reference": "gold"}).json()
    table = body["tables"][0]
    assert table["key"] == "weighted"
    assert table["title"] == "Weighted for the whole pool (adaptive selection)"
    w = 1 / np.minimum(1, keys.max() * q)
    assert table["caption"] == (
        f"These figures are weighted: this campaign serves the pairs where the metrics disagree first, so its "
        f"{len(pairs)} judged pairs of {len(pairs) + 1} over-represent the disputed ones. Each judged pair counts "
        f"1 / its inclusion probability (weights from {fmt(w.min(), 1)} to {fmt(w.max(), 1)}; Hájek "
        "(inverse-probability weighted) estimator), so the figures describe the whole pool. The tables below "
        "are unweighted: they describe the judged pairs."
    )
    gold = np.array([pair.gold_label for pair in pairs])
    values = {pair.pk: pair for pair in pairs}
    from scoring.models import Score

    bleu = dict(Score.objects.filter(pair__in=pairs, metric_config__label="BLEU").values_list("pair_id", "value"))
    expected = loop_auc(np.array([bleu[pk] for pk in values]), gold, w)
    row = next(row for row in table["rows"] if row["label"] == "BLEU")
    assert row["cells"][0]["value"] == pytest.approx(expected, abs=5e-4)
    assert row["cells"][0]["text"] == fmt(expected)
    # The weighted paired test of every two metrics: ΔAUC = the two loop AUCs' difference.
    lev = dict(Score.objects.filter(pair__in=pairs, metric_config__label="LEV").values_list("pair_id", "value"))
    expected_lev = loop_auc(-np.array([lev[pk] for pk in values]), gold, w)
    delta = body["tables"][1]
    assert (delta["key"], delta["title"]) == ("weighted-delta", "Weighted ΔAUC between metrics (adaptive selection)")
    row = next(row for row in delta["rows"] if row["label"] == "BLEU \u2212 LEV")
    assert row["cells"][0]["value"] == pytest.approx(expected - expected_lev, abs=5e-4)
    assert row["cells"][4]["text"] == str(len(pairs))
    low, high = row["cells"][1]["text"].split(" to ")
    assert float(low) < row["cells"][0]["value"] < float(high)
    # The whole pool judged: a census, every weight 1, the figures the pool's own.
    waiting.delete()
    cache.clear()
    shared_cache().clear()
    body = client.get("/staff/dashboard/data/", {"campaign": "adapt", "reference": "gold"}).json()
    row = next(row for row in body["tables"][0]["rows"] if row["label"] == "BLEU")
    census = loop_auc(np.array([bleu[pk] for pk in values]), gold, np.ones(len(pairs)))
    assert row["cells"][0]["value"] == pytest.approx(census, abs=5e-4)
    assert "(weights from 1.0 to 1.0;" in body["tables"][0]["caption"]
    # A balanced campaign has no weighted table.
    balanced = make_scored_campaign(slug="fair", name="Fair")
    body = client.get("/staff/dashboard/data/", {"campaign": balanced.campaign.slug}).json()
    assert all(table["key"] != "weighted" for table in body["tables"])
