"""A probe set stored as a closed campaign of its own, from the command line; its robustness
card printed by ``evaluate_metrics --robustness`` from scores stored like any other."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Campaign, Pair
from scoring.models import ProbePair, ProbeSet, Score
from tests.builders import make_campaign, make_metric_config, make_pair
from tests.test_analysis_robustness import SENTENCES, bag_of_words_cosine, bigram_overlap

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_build_probes_stores_a_closed_campaign_with_each_pair_relation() -> None:
    campaign = make_campaign(slug="news")
    source = make_pair(
        campaign,
        source="Flights from Boston to Denver leave daily.",
        hypothesis="Daily flights go from Boston to Denver.",
        gold_label=True,
    )
    make_pair(campaign, source="Training.", hypothesis="Training.", is_training=True, training_position=1)
    output = run("build_probes", "--campaign", "news", "--kinds", "paws_swap,reversed", "--seed", "20250101")
    assert output.splitlines() == [
        f"Probe set {ProbeSet.objects.get().pk}: campaign news-probes, 6 pairs from 1 source pairs",
        "  control: 3",
        "  original: 1",
        "  paws_swap: 1",
        "  reversed: 1",
    ]
    probe_campaign = Campaign.objects.get(slug="news-probes")
    assert probe_campaign.is_open is False
    assert probe_campaign.probe_set.source_campaign == campaign
    stored = [
        (
            p.pair.source,
            p.pair.hypothesis,
            p.pair.gold_label,
            p.kind,
            p.group,
            p.source_pair_id,
            p.expected_paraphrase,
            p.detail,
        )
        for p in ProbePair.objects.select_related("pair").order_by("pair_id")
    ]
    s, h, g = source.source, source.hypothesis, str(source.pk)
    assert stored == [
        (s, h, True, "original", g, source.pk, True, "original"),
        (s, "Flights from Denver to Boston leave daily.", False, "paws_swap", g, source.pk, False, "Boston <-> Denver"),
        (s, s, True, "control", g, source.pk, True, "identity"),
        (s, "Flights from Boston to Denver leave daily", True, "control", g, source.pk, True, "punctuation"),
        (s, "flights from boston to denver leave daily.", True, "control", g, source.pk, True, "case"),
        (h, s, True, "reversed", g, source.pk, True, "reversed"),
    ]
    # The volunteers' campaign is untouched: its pairs are the two it had.
    assert Pair.objects.filter(campaign=campaign).count() == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--campaign", "nope"], "no campaign with slug 'nope'"),
        (
            ["--campaign", "news", "--kinds", "paws_swap,shuffle"],
            "unknown probe kind 'shuffle'; choose from multi_swap, paws_swap, number, date, negation, reversed, padded",
        ),
        (
            ["--campaign", "news", "--origin", "mrpc"],
            "campaign 'news' has no pairs of origin 'mrpc' to build probes from",
        ),
    ],
)
def test_refusals_name_what_is_wrong_and_store_nothing(args: list[str], message: str) -> None:
    make_pair(make_campaign(slug="news"), origin="test")
    with pytest.raises(CommandError) as error:
        run("build_probes", *args)
    assert str(error.value) == message
    assert ProbeSet.objects.count() == 0
    assert Campaign.objects.count() == 1


def test_a_probe_set_is_not_a_source() -> None:
    make_pair(make_campaign(slug="news"))
    run("build_probes", "--campaign", "news", "--kinds", "reversed")
    with pytest.raises(CommandError, match="is a probe set itself"):
        run("build_probes", "--campaign", "news-probes")


def test_robustness_card_of_stored_scores() -> None:
    campaign = make_campaign(slug="news")
    for sentence in SENTENCES:
        make_pair(campaign, source=sentence, hypothesis=sentence, gold_label=True)
    run("build_probes", "--campaign", "news", "--kinds", "paws_swap", "--seed", "5")
    cosine = make_metric_config("bow", label="bag of words")
    bigrams = make_metric_config("bigrams", label="bigrams")
    # The same scores as a distance (lower is closer): the card must read it the same way.
    distance = make_metric_config("lev", label="distance")
    for pair in Pair.objects.filter(campaign__slug="news-probes"):
        Score.objects.create(pair=pair, metric_config=cosine, value=bag_of_words_cosine(pair.source, pair.hypothesis))
        value = bigram_overlap(pair.source, pair.hypothesis)
        Score.objects.create(pair=pair, metric_config=bigrams, value=value)
        Score.objects.create(pair=pair, metric_config=distance, value=1 - value)
    output = run("evaluate_metrics", "--campaign", "news", "--robustness", "--resamples", "0")
    lines = output.splitlines()
    assert lines[0] == f"Robustness on probe set {ProbeSet.objects.get().pk} (campaign news-probes)"
    assert lines[3:6] == [
        "| bigrams | 1.000 (n=8) | — | — | — | — | — | — | — | — |",
        "| bag of words | 0.500 (n=8) | — | — | — | — | — | — | — | — |",
        "| distance | 1.000 (n=8) | — | — | — | — | — | — | — | — |",
    ]
    assert "0.5 is a metric blind to the change" in output


# --- The API -------------------------------------------------------------------------------

from tests.api_support import *  # noqa: E402, F403


def test_api_serves_the_cards_and_a_sample_of_each_kind(staff_api, api) -> None:  # type: ignore[no-untyped-def]
    campaign = make_campaign(slug="news")
    make_pair(
        campaign,
        source="Flights from Boston to Denver leave daily.",
        hypothesis="Daily flights go from Boston to Denver.",
        gold_label=True,
    )
    run("build_probes", "--campaign", "news", "--kinds", "paws_swap", "--seed", "20250101")
    config = make_metric_config("bow", label="bag of words")
    for pair in Pair.objects.filter(campaign__slug="news-probes"):
        Score.objects.create(pair=pair, metric_config=config, value=bag_of_words_cosine(pair.source, pair.hypothesis))
    assert api.get("/api/campaigns/news/robustness/").status_code in (401, 403)
    body = staff_api.get("/api/campaigns/news/robustness/?resamples=0&samples=1").json()
    assert (body["campaign"], body["source_campaign"], body["seed"]) == ("news-probes", "news", 20250101)
    [card] = body["cards"]
    assert card["label"] == "bag of words"
    assert card["card"]["below_control"][0] == {
        "kind": "paws_swap",
        "share": {"value": 0.5, "interval": None, "groups": 1, "comparisons": 3},
    }
    assert [(s["kind"], s["hypothesis"]) for s in body["samples"]] == [
        ("control", "Flights from Boston to Denver leave daily"),
        ("paws_swap", "Flights from Denver to Boston leave daily."),
    ]


@pytest.mark.parametrize(
    ("query", "code", "body"),
    [
        ("?samples=x", 400, {"samples": ["samples: a whole number from 0 to 50, got 'x'"]}),
        ("?resamples=-1", 400, {"resamples": ["resamples: a whole number from 0 to 10000, got '-1'"]}),
    ],
)
def test_api_refuses_bad_parameters(staff_api, query: str, code: int, body: dict[str, list[str]]) -> None:  # type: ignore[no-untyped-def]
    make_pair(make_campaign(slug="news"))
    response = staff_api.get(f"/api/campaigns/news/robustness/{query}")
    assert (response.status_code, response.json()) == (code, body)


def test_api_without_a_probe_set_is_a_404_that_says_so(staff_api) -> None:  # type: ignore[no-untyped-def]
    make_campaign(slug="plain")
    response = staff_api.get("/api/campaigns/plain/robustness/")
    assert response.status_code == 404
    assert response.json() == {"detail": "campaign 'plain' has no probe set: build one with manage.py build_probes"}


def test_the_probe_pairs_are_queued_for_scoring_like_imported_pairs(
    settings, monkeypatch, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    from paraeval import broker

    settings.PARAEVAL_METRICS = ["lev"]
    sent: list[broker.TaskMessage] = []
    monkeypatch.setattr(broker, "send", lambda messages: sent.extend(messages) or broker.SendResult(len(messages), 0))
    make_pair(make_campaign(slug="news"), source="Flights from Boston to Denver leave daily.", hypothesis="Daily.")
    with django_capture_on_commit_callbacks(execute=True):
        run("build_probes", "--campaign", "news", "--kinds", "paws_swap")
    probe_ids = sorted(Pair.objects.filter(campaign__slug="news-probes").values_list("id", flat=True))
    assert [(m.name, m.queue, sorted(m.args[1])) for m in sent] == [(broker.SCORE_PAIRS_TASK, "cpu", probe_ids)]


def test_api_queues_a_build_that_the_task_runs_once(  # type: ignore[no-untyped-def]
    staff_api, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    from paraeval import broker
    from scoring.probes.tasks import build_probe_set

    sent: list[broker.TaskMessage] = []
    monkeypatch.setattr(broker, "send", lambda messages: sent.extend(messages) or broker.SendResult(len(messages), 0))
    campaign = make_campaign(slug="news")
    make_pair(campaign, source="Flights from Boston to Denver leave daily.", hypothesis="Daily flights.")
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_api.post("/api/campaigns/news/probes/", {"kinds": ["reversed"], "seed": 3}, format="json")
    assert response.status_code == 202
    key = response.json()["request"]
    [message] = sent
    assert (message.name, message.queue, message.args) == (
        "scoring.probes.tasks.build_probe_set",
        "cpu",
        (campaign.pk, ["reversed"], 3, "", key),
    )
    assert ProbeSet.objects.count() == 0  # nothing built in the request
    first = build_probe_set(*message.args)
    assert build_probe_set(*message.args) == first  # delivered twice: built once
    assert ProbeSet.objects.get().request_key == key
    assert Pair.objects.filter(campaign__slug="news-probes").count() == 2


@pytest.mark.parametrize(
    ("body", "code", "field", "message"),
    [
        ({"kinds": ["shuffle"]}, 400, "kinds", {"0": ['"shuffle" is not a valid choice.']}),
        ({"seed": -1}, 400, "seed", ["Ensure this value is greater than or equal to 0."]),
        ({"origin": "mrpc"}, 409, "campaign", ["campaign 'news' has no pairs of origin 'mrpc' to build probes from"]),
    ],
)
def test_api_build_refusals(staff_api, body: dict[str, object], code: int, field: str, message: object) -> None:  # type: ignore[no-untyped-def]
    make_pair(make_campaign(slug="news"))
    response = staff_api.post("/api/campaigns/news/probes/", body, format="json")
    assert response.status_code == code
    assert response.json()[field] == message
    assert ProbeSet.objects.count() == 0
