"""The staff pages that replace two shell steps: tune a judge (queued on its worker) and set the
PARAPHRASUS objective of each corpus, over HTTP. Thin pages over the commands' own services."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.utils.html import escape

from annotate.models import CorpusObjective
from paraeval import broker
from scoring.metrics.judges import parse_models
from scoring.models import TunedJudge
from scoring.reports.paraphrasus import objectives
from tests.builders import make_campaign, make_pair, make_staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client() -> Client:
    client = Client()
    client.force_login(make_staff("staff", "pw"))
    return client


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[broker.TaskMessage]:
    """The tasks the page sends (no worker runs here: the worker test of tuning is elsewhere)."""
    messages: list[broker.TaskMessage] = []
    monkeypatch.setattr(broker, "send", lambda batch: messages.extend(batch) or broker.SendResult(len(batch), 0))
    return messages


@pytest.fixture
def judges(settings, tmp_path: Path) -> None:
    settings.PARAPLUIE_TUNED_DIR = tmp_path / "judges"
    settings.PARAPLUIE_MODELS = parse_models("smollm2[model=embedded]")
    settings.PARAEVAL_METRICS = ["lev", "parapluie_direct"]


def gold_campaign(positives: int, negatives: int, slug: str = "mrpc-train"):
    campaign = make_campaign(slug=slug, name="MRPC train")
    for index in range(positives + negatives):
        make_pair(campaign, source=f"source {index}", hypothesis=f"hypothesis {index}", gold_label=index < positives)
    return campaign


FORM = {
    "campaign": "mrpc-train",
    "reference": "gold",
    "judge": "smollm2",
    "template": "direct",
    "folds": "2",
    "epochs": "1",
    "max_pairs": "0",
    "max_tokens": "192",
    "learning_rate": "0.0002",
    "seed": "7",
    "start_from": "",
}


def test_the_pages_are_staff_only(client: Client) -> None:
    make_campaign(slug="c")
    for url in ("/staff/tuning/", "/staff/campaigns/c/objectives/"):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"]
        assert client.post(url, {}).status_code == 302


def test_a_tuning_is_queued_on_its_judges_worker_and_listed(
    staff_client: Client, judges, sent, django_capture_on_commit_callbacks
) -> None:
    campaign = gold_campaign(4, 4)
    page = staff_client.get("/staff/tuning/", {"campaign": "mrpc-train"}).content.decode()
    assert '<option value="mrpc-train" selected>MRPC train (mrpc-train)</option>' in page
    assert '<option value="smollm2">smollm2 (embedded)</option>' in page
    assert '<option value="direct" selected>direct (en)</option>' in page
    assert "indirect" not in page.split('id="id_template"')[1].split("</select>")[0]  # INDIRECT cannot be tuned
    assert '<p id="no-tunings">No tuning yet.</p>' in page

    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post("/staff/tuning/", FORM)
    row = TunedJudge.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/staff/tuning/?campaign=mrpc-train&queued={row.pk}"
    assert [(m.name, m.args, m.queue) for m in sent] == [("scoring.tuning.tasks.tune_judge", (row.pk,), "llm.smollm2")]
    assert (row.campaign_id, row.reference, row.base_judge, row.template, row.status) == (
        campaign.pk,
        "gold",
        "smollm2",
        "direct",
        "queued",
    )
    assert {key: row.options[key] for key in ("folds", "epochs", "max_pairs", "max_tokens", "seed")} == {
        "folds": 2,
        "epochs": 1,
        "max_pairs": 0,
        "max_tokens": 192,
        "seed": 7,
    }
    page = staff_client.get(response["Location"]).content.decode()
    assert (
        f'<p id="tuning-queued" class="form-ok" role="status">Tuning {row.pk} of smollm2 on MRPC train (mrpc-train) '
        "queued on <code>llm.smollm2</code>"
    ) in page
    assert f'<tr data-tuning="{row.pk}">' in page and '<td data-label="State:">queued</td>' in page


def test_a_tuning_that_cannot_run_is_refused_with_the_reason_and_stores_nothing(
    staff_client: Client, judges, sent, django_capture_on_commit_callbacks
) -> None:
    gold_campaign(3, 5)
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post("/staff/tuning/", {**FORM, "folds": "4"})
    assert response.status_code == 400
    message = (
        "campaign 'mrpc-train' has 3 pairs labelled paraphrase and 5 labelled not (gold; 0 without a label): "
        "tuning with 4 folds needs at least 4 of each"
    )
    assert f'<p id="tuning-error" class="form-error" role="alert">{escape(message)}</p>' in response.content.decode()
    assert not TunedJudge.objects.exists() and not sent
    # A value no form offers: a 400 naming the field, never a 500.
    response = staff_client.post("/staff/tuning/", {**FORM, "judge": "nope", "folds": "x"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Select a valid choice. nope is not one of the available choices." in page
    assert "Enter a whole number." in page


def objectives_campaign():
    campaign = make_campaign(slug="paraphrasus", name="PARAPHRASUS")
    for origin in ("mrpc", "sts", "true"):
        make_pair(campaign, origin=origin)
    return campaign


def test_the_objective_of_each_corpus_is_set_from_the_page(staff_client: Client) -> None:
    campaign = objectives_campaign()
    CorpusObjective.objects.create(campaign=campaign, origin="sts", objective="classify")
    page = staff_client.get("/staff/campaigns/paraphrasus/objectives/").content.decode()
    assert [row for row in ("mrpc", "sts", "true") if f'<tr data-origin="{row}">' in page] == ["mrpc", "sts", "true"]
    assert '<select name="objective:sts" aria-label="Objective of sts">' in page
    assert '<option value="classify" selected>classify (by the gold labels)</option>' in page

    form = {"objective:mrpc": "classify", "objective:sts": "minimise", "objective:true": "maximise"}
    response = staff_client.post("/staff/campaigns/paraphrasus/objectives/", form)
    assert response.status_code == 302 and response["Location"] == "/staff/campaigns/paraphrasus/objectives/?saved=1"
    assert {origin: objective.value for origin, objective in objectives(campaign).items()} == {
        "mrpc": "classify",
        "sts": "minimise",
        "true": "maximise",
    }
    assert (
        '<p id="objectives-saved" class="form-ok" role="status">Saved.</p>'
        in staff_client.get(response["Location"]).content.decode()
    )
    # "No objective" removes one.
    staff_client.post("/staff/campaigns/paraphrasus/objectives/", {**form, "objective:true": ""})
    assert sorted(CorpusObjective.objects.values_list("origin", flat=True)) == ["mrpc", "sts"]


def test_a_bad_objective_or_corpus_is_refused_naming_it_and_nothing_changes(staff_client: Client) -> None:
    campaign = objectives_campaign()
    response = staff_client.post(
        "/staff/campaigns/paraphrasus/objectives/", {"objective:mrpc": "classify", "objective:sts": "guess"}
    )
    assert response.status_code == 400
    message = "'guess' is not an objective for 'sts'; choose classify, minimise or maximise"
    assert f'<p id="objectives-error" class="form-error" role="alert">{escape(message)}</p>' in (
        response.content.decode()
    )
    response = staff_client.post("/staff/campaigns/paraphrasus/objectives/", {"objective:paws": "classify"})
    assert response.status_code == 400
    assert escape("campaign 'paraphrasus' has no pairs with origin 'paws'") in response.content.decode()
    assert not CorpusObjective.objects.filter(campaign=campaign).exists()
    assert staff_client.get("/staff/campaigns/nope/objectives/").status_code == 404


def test_the_settings_page_links_both_pages(staff_client: Client) -> None:
    objectives_campaign()
    page = staff_client.get("/staff/campaigns/paraphrasus/settings/").content.decode()
    assert '<a href="/staff/campaigns/paraphrasus/objectives/" id="objectives-link">PARAPHRASUS objectives</a>' in page
    assert '<a href="/staff/tuning/?campaign=paraphrasus" id="tuning-link">Tune a judge</a>' in page
