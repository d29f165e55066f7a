"""A tuning through a real worker: a slice of the demo pairs, an adapter, a configuration, honest scores.

The test process plays the web side and the command (``tune_judge --queue``); a real Celery
worker consuming the base judge's queue (``llm.tiny``: the tiny random Mistral of
tests/judge_models.py, so training takes seconds) shares the PostgreSQL test database and a Redis
database. The worker trains, records the tuned judge and scores the campaign by cross-fitting;
the test then reads the fold assignment and checks, adapter by adapter, that no pair was scored
by an adapter trained on it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
import redis
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotate.importers.demo import DEMO_FILE
from scoring.metrics import tuned
from scoring.metrics.parapluie import ParaPluie
from scoring.models import MetricConfig, Score, TunedJudge
from tests.builders import make_campaign, make_pair, make_staff
from tests.judge_models import save_tiny_mistral
from tests.workers_support import (
    WorkerProcess,
    judge_workers_env,
    wait_for,
)

pytestmark = [pytest.mark.worker, pytest.mark.model, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def tuning_env(settings, redis_url: str, redis_db: redis.Redis, tmp_path: Path) -> Iterator[dict[str, str]]:
    tiny = save_tiny_mistral(tmp_path / "tiny-mistral")
    settings.PARAPLUIE_TUNED_DIR = tmp_path / "judges"
    extra = {"PARAPLUIE_TUNED_DIR": str(tmp_path / "judges"), "PARAEVAL_WORKER_WARM_UP": "0"}
    with judge_workers_env(settings, redis_url, f"tiny[model={tiny},batch_size=4]", **extra) as env:
        yield env


def test_a_tuning_on_a_worker_gives_an_adapter_a_configuration_and_cross_fitted_scores(
    tuning_env: dict[str, str], tmp_path: Path
) -> None:
    records = [json.loads(line) for line in DEMO_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    demo = [record for record in records if "gold_label" in record][:16]
    campaign = make_campaign()
    labelled = [
        make_pair(campaign, source=record["source"], hypothesis=record["hypothesis"], gold_label=record["gold_label"])
        for record in demo[:14]
    ]
    # Pairs without a label are not trained on: the full adapter scores them.
    unlabelled = [make_pair(campaign, source=r["source"], hypothesis=r["hypothesis"]) for r in demo[14:]]
    out = StringIO()
    call_command(
        "tune_judge",
        "--campaign",
        campaign.slug,
        "--reference",
        "gold",
        "--folds",
        "2",
        "--batch-size",
        "4",
        "--eval-every",
        "2",
        "--rank",
        "4",
        "--learning-rate",
        "5e-3",
        "--queue",
        stdout=out,
    )
    row = TunedJudge.objects.get()
    assert out.getvalue().strip() == f"tuning {row.pk} of tiny queued on llm.tiny"
    worker = WorkerProcess(tuning_env, tmp_path, name="tiny", queues="llm.tiny").start()
    try:
        wait_for(
            lambda: (
                TunedJudge.objects.get().status in ("done", "failed")
                and Score.objects.filter(metric_config__label__contains="-tuned-").count() == 16
            ),
            timeout=300,
            what="the tuning and its 16 scores\n" + worker.log()[-3000:],
        )
    finally:
        worker.stop()
    row.refresh_from_db()
    assert (row.status, row.error) == ("done", "")
    log = worker.log()
    assert "scoring.tuning.tasks.tune_judge" in log and "tuned judge loaded" in log

    # The adapter: a bundle with the full adapter and one per fold, under PARAPLUIE_TUNED_DIR.
    folder = Path(row.folder)
    assert folder.parent == tmp_path / "judges" and folder.name == row.name
    for adapter in ("full", "fold-0", "fold-1"):
        assert (folder / adapter / "adapter_model.safetensors").stat().st_size > 0
    # A new configuration beside the base model's, on the tuned judge's own queue.
    config = row.metric_config
    assert config is not None and config.label == f"parapluie_direct[{row.label}]"
    assert row.label.startswith("tiny-mistral-tuned-") and config.queue == f"llm.{row.name}"
    assert MetricConfig.objects.filter(label="parapluie_direct[tiny-mistral]").count() == 0  # nothing replaced
    assert row.progress["event"] == "done" and row.result["pairs"] == 14

    # The fold assignment, as stored: every labelled pair in one of the two folds, the same on disk.
    folds = {int(pk): fold for pk, fold in row.folds.items()}
    assert set(folds) == {pair.pk for pair in labelled} and set(folds.values()) == {0, 1}
    on_disk = tuned.read_folds(folder)
    assert {tuned.pair_key(p.source, p.hypothesis): folds[p.pk] for p in labelled} == on_disk
    # Each fold adapter learnt from the other fold's pairs only (training plus validation).
    for adapter in row.result["adapters"][1:]:
        fold = int(adapter["adapter"].removeprefix("fold-"))
        assert adapter["train_pairs"] + adapter["validation_pairs"] == sum(1 for f in folds.values() if f != fold)

    # Each stored score is that of the adapter that never saw the pair, not of the one that did.
    stored = dict(Score.objects.filter(metric_config=config).values_list("pair_id", "value"))
    metric = ParaPluie("direct", model=str(folder), batch_size=4)
    by_adapter = {
        adapter: dict(
            zip(
                [pair.pk for pair in labelled + unlabelled],
                metric.score_with_adapter([(p.source, p.hypothesis) for p in labelled + unlabelled], adapter),
                strict=True,
            )
        )
        for adapter in ("full", "fold-0", "fold-1")
    }
    for pair in labelled:
        own, trained_on_it = f"fold-{folds[pair.pk]}", f"fold-{1 - folds[pair.pk]}"
        assert stored[pair.pk] == pytest.approx(by_adapter[own][pair.pk], abs=1e-5)
        assert stored[pair.pk] != pytest.approx(by_adapter[trained_on_it][pair.pk], abs=1e-5)
        assert stored[pair.pk] != pytest.approx(by_adapter["full"][pair.pk], abs=1e-5)
    for pair in unlabelled:
        assert stored[pair.pk] == pytest.approx(by_adapter["full"][pair.pk], abs=1e-5)

    # The dashboard says so.
    staff = make_staff()
    client = Client()
    client.force_login(staff)
    page = client.get(reverse("staff:dashboard"), {"campaign": campaign.slug}).content.decode()
    assert f"{config.label} was tuned on this campaign&#x27;s own labels (14 pairs, gold labels)" in page
    assert "cross-fitted over 2 folds, each pair scored by an adapter that never saw it" in page
