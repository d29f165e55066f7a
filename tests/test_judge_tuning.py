"""Tuning a judge (manage.py tune_judge): the training data, the requests, tuned judges as judge models.

Nothing here trains a real model except the ``model``-marked tests at the end, which tune the
tiny random Mistral of tests/judge_models.py for a few steps (seconds). The worker test is in
tests/test_judge_tuning_worker.py; the fast path on a tuned SmolLM2 in tests/test_parapluie_model.py.
"""

from __future__ import annotations

import json
import random
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from sklearn.metrics import roc_auc_score

from annotate.labels import Label
from scoring.metrics import tuned
from scoring.metrics.judge_training import assign_folds, roc_auc, stratified_split
from scoring.metrics.judge_training_options import LabelledPair, TuningError, TuningOptions
from scoring.metrics.judges import configured_models, parse_models
from scoring.metrics.lm import describe_model
from scoring.metrics.registry import InvalidSpec, build_specs
from scoring.models import MetricConfig, TunedJudge
from scoring.pipeline import configs
from scoring.tuning import service as judge_tuning
from tests.builders import make_campaign, make_judgement, make_pair, make_staff, make_volunteer
from tests.judge_models import record_learnt, write_bundle

# --- Pure pieces: checked against sklearn and by construction ----------------------------------


def test_roc_auc_equals_sklearn_with_ties_and_is_none_without_both_classes() -> None:
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 300).astype(float)
    scores = np.round(rng.normal(labels * 0.8, 1.0), 1)  # rounded: many ties
    assert roc_auc(scores.tolist(), labels.tolist()) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    assert roc_auc([0.1, 0.2], [1.0, 1.0]) is None
    assert roc_auc([1.0, 0.0], [1.0, 0.0]) == 1.0


def _pairs(positives: int, negatives: int) -> list[LabelledPair]:
    return [LabelledPair(f"s{i}", f"h{i}", i < positives, i) for i in range(positives + negatives)]


def test_validation_split_is_stratified_seeded_and_leaves_each_class_in_training() -> None:
    items = _pairs(30, 10)
    train, validation = stratified_split(items, 0.1, seed=5)
    assert sorted(train + validation) == list(range(40))
    assert sum(items[i].label for i in validation) == 3 and sum(not items[i].label for i in validation) == 1
    assert stratified_split(items, 0.1, seed=5) == (train, validation)
    assert stratified_split(items, 0.1, seed=6) != (train, validation)
    # Two pairs of a class: one to validation, one stays to learn from.
    train, validation = stratified_split(_pairs(2, 2), 0.1, seed=0)
    assert len(train) == 2 and len(validation) == 2


def test_folds_are_balanced_by_class_and_seeded() -> None:
    items = _pairs(23, 11)
    folds = assign_folds(items, 5, seed=1)
    assert set(folds) == {item.key for item in items} and set(folds.values()) == set(range(5))
    sizes = [list(folds.values()).count(fold) for fold in range(5)]
    assert max(sizes) - min(sizes) <= 1
    positives = [sum(1 for item in items if item.label and folds[item.key] == fold) for fold in range(5)]
    assert max(positives) - min(positives) <= 1
    assert assign_folds(items, 5, seed=1) == folds


def test_routing_sends_a_training_pair_to_its_folds_adapter_and_any_other_to_full() -> None:
    folds = {tuned.pair_key("a", "b"): 1, tuned.pair_key("c", "d"): 0}
    keys = [tuned.pair_key("a", "b"), tuned.pair_key("c", "d"), tuned.pair_key("b", "a")]
    assert tuned.route(keys, folds) == ["fold-1", "fold-0", "full"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (TuningOptions(folds=1), "folds must be 0 (no cross-fitting) or 2 to 20, got 1"),
        (TuningOptions(rank=0), "rank must be at least 1, got 0"),
        (TuningOptions(validation_share=0.6), "validation_share must be in (0, 0.5), got 0.6"),
        (TuningOptions(learning_rate=0), "learning_rate must be in (0, 1), got 0"),
    ],
)
def test_bad_options_are_refused_naming_the_option(options: TuningOptions, message: str) -> None:
    with pytest.raises(TuningError, match=message.replace("(", r"\(").replace(")", r"\)")):
        options.check()


@pytest.mark.parametrize(
    "options",
    [
        TuningOptions(seed=7, folds=5, targets=("q_proj", "v_proj")),
        TuningOptions(seed=7, folds=5, start_from="smollm2-tuned-1a2b3c4d"),
    ],
)
def test_options_come_back_whole_from_their_identity(options: TuningOptions) -> None:
    """A row's stored options, and a judge.json's settings, are read back as the same options: the
    starting judge too (without it, a judge started elsewhere would be named as one from scratch)."""
    assert TuningOptions.from_identity(options.identity()) == options
    row = TunedJudge(options=options.identity())
    assert judge_tuning.options_of(row) == options


def test_names_and_labels_of_a_tuned_judge() -> None:
    assert tuned.tuned_label("SmolLM2-135M-Instruct", "1a2b3c4d5e") == "SmolLM2-135M-tuned-1a2b3c4d"
    assert tuned.tuned_label("tiny-mistral", "ff00aa11") == "tiny-mistral-tuned-ff00aa11"
    assert tuned.tuned_name("smollm2", "1a2b3c4d5e") == "smollm2-tuned-1a2b3c4d"


# --- Training data from a campaign ---------------------------------------------------------------


@pytest.mark.django_db
def test_volunteer_labels_leave_out_excluded_volunteers_ties_and_unjudged_pairs() -> None:
    campaign = make_campaign()
    yes, no, tie, unjudged, flipped = (make_pair(campaign, gold_label=True) for _ in range(5))
    kept = [make_volunteer(campaign) for _ in range(2)]
    excluded = make_volunteer(campaign, exclusion_override="exclude")
    for volunteer in kept:
        make_judgement(yes, volunteer, Label.SAME_MEANING)
        make_judgement(no, volunteer, Label.VERY_DIFFERENT)
        make_judgement(flipped, volunteer, Label.SLIGHTLY_SIMILAR)
    make_judgement(tie, kept[0], Label.MOSTLY_SIMILAR)
    make_judgement(tie, kept[1], Label.SLIGHTLY_SIMILAR)
    # The excluded volunteer's three "same meaning" would turn flipped into a paraphrase: left out.
    make_judgement(flipped, excluded, Label.SAME_MEANING)
    make_judgement(unjudged, excluded, Label.SAME_MEANING)
    data = judge_tuning.labelled_pairs(campaign, "volunteers")
    assert {pair.id: pair.label for pair in data.pairs} == {yes.pk: True, no.pk: False, flipped.pk: False}
    assert data.unlabelled == 2
    assert data.pairs[0] == LabelledPair(yes.source, yes.hypothesis, True, yes.pk)
    gold = judge_tuning.labelled_pairs(campaign, "gold")
    assert len(gold.pairs) == 5 and all(pair.label for pair in gold.pairs)


@pytest.fixture
def tuned_dir(settings, tmp_path: Path) -> Path:
    settings.PARAPLUIE_TUNED_DIR = tmp_path / "judges"
    settings.PARAPLUIE_MODELS = parse_models("smollm2[model=embedded]")
    settings.PARAEVAL_METRICS = ["lev", "parapluie_direct", "parapluie_fs_direct"]
    return tmp_path / "judges"


def _gold_campaign(positives: int, negatives: int):
    campaign = make_campaign()
    for index in range(positives + negatives):
        make_pair(campaign, source=f"source {index}", hypothesis=f"hypothesis {index}", gold_label=index < positives)
    return campaign


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("judge", "template", "folds", "message"),
    [
        ("nope", "direct", 2, "unknown judge model 'nope'; the configured ones (PARAPLUIE_MODELS) are smollm2"),
        (None, "indirect", 2, "template 'indirect' generates an explanation first (INDIRECT)"),
        (None, "direct", 0, "folds must be at least 2, got 0"),
        (None, "direct", 4, "has 3 pairs labelled paraphrase and 5 labelled not (gold; 0 without a label)"),
        (None, "no_such", 2, "no_such"),
    ],
)
def test_a_bad_request_is_refused_and_stores_nothing(
    tuned_dir: Path, judge: str | None, template: str, folds: int, message: str
) -> None:
    campaign = _gold_campaign(3, 5)
    options = judge_tuning.default_options(template=template, folds=folds)
    with pytest.raises(judge_tuning.TuningRequestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        judge_tuning.request(campaign, judge=judge, reference="gold", options=options)
    assert TunedJudge.objects.count() == 0


@pytest.mark.django_db
def test_the_command_refuses_clearly(tuned_dir: Path) -> None:
    with pytest.raises(CommandError, match="no campaign 'missing'"):
        call_command("tune_judge", "--campaign", "missing")
    campaign = _gold_campaign(1, 5)
    with pytest.raises(CommandError, match="has 1 pairs labelled paraphrase"):
        call_command("tune_judge", "--campaign", campaign.slug, "--reference", "gold", "--folds", "2")
    assert TunedJudge.objects.count() == 0


@pytest.mark.django_db
def test_a_queued_tuning_goes_to_its_base_judges_queue(tuned_dir: Path, django_capture_on_commit_callbacks) -> None:
    campaign = _gold_campaign(4, 4)
    out = StringIO()
    sent = []
    from paraeval import broker

    original = broker.send
    broker.send = lambda messages: (sent.extend(messages), broker.SendResult(len(messages), 0))[1]  # type: ignore[assignment]
    try:
        with django_capture_on_commit_callbacks(execute=True):
            call_command(
                "tune_judge", "--campaign", campaign.slug, "--reference", "gold", "--folds", "2", "--queue", stdout=out
            )
    finally:
        broker.send = original  # type: ignore[assignment]
    row = TunedJudge.objects.get()
    assert out.getvalue().strip() == f"tuning {row.pk} of smollm2 queued on llm.smollm2"
    assert [(m.name, m.args, m.queue) for m in sent] == [("scoring.tuning.tasks.tune_judge", (row.pk,), "llm.smollm2")]
    assert (row.status, row.template, row.reference, row.options["folds"]) == ("queued", "direct", "gold", 2)
    assert row.options["seed"] == 20250101  # PARAEVAL_SEED
    out = StringIO()
    call_command("tune_judge", "--list", stdout=out)
    assert out.getvalue().splitlines() == [f"{row.pk}\tqueued\tsmollm2\t{campaign.slug}\tgold"]


# --- A tuned judge is a judge model like any other (files only: no model loads) ---------------


@pytest.mark.django_db
def test_a_tuned_judge_folder_is_a_judge_model_with_its_own_queue_label_and_template(tuned_dir: Path) -> None:
    before = {metric.label for metric in configs.build_enabled()[0]}
    write_bundle(tuned_dir / "smollm2-tuned-00000000", base_spec="embedded", base_name="smollm2")
    (tuned_dir / ".tuning-unfinished").mkdir()  # a bundle being written is not a judge yet
    judges = {judge.name: judge for judge in configured_models()}
    assert list(judges) == ["smollm2", "smollm2-tuned-00000000"]
    tuned_judge = judges["smollm2-tuned-00000000"]
    assert (tuned_judge.queue, tuned_judge.template, tuned_judge.tuned_from) == (
        "llm.smollm2-tuned-00000000",
        "direct",
        "smollm2",
    )
    labels = {metric.label: metric for metric in build_specs("parapluie_direct")}
    tuned_metric = next(metric for label, metric in labels.items() if "-tuned-" in label)
    assert tuned_metric.label.startswith("parapluie_direct[SmolLM2-135M-tuned-")
    assert tuned_metric.queue == "llm.smollm2-tuned-00000000"
    # Only its own template: fs_direct stays on the base model alone.
    fs_direct = [metric.label for metric in build_specs("parapluie_fs_direct")]
    assert fs_direct == ["parapluie_fs_direct[SmolLM2-135M-Instruct]"]
    with pytest.raises(InvalidSpec, match="was tuned with the template 'direct' only"):
        build_specs("parapluie_fs_direct[model=smollm2-tuned-00000000]")
    # Enabled beside the base model at once (the enabled set follows the folder), old ones kept.
    after = {metric.label for metric in configs.build_enabled()[0]}
    assert after - before == {tuned_metric.label} and before <= after
    assert "llm.smollm2-tuned-00000000" in configs.all_queues()


def test_the_content_hash_changes_when_an_adapter_changes(tuned_dir: Path) -> None:
    folder = write_bundle(tuned_dir / "j", base_spec="embedded", base_name="smollm2", folds={"k1": 0, "k2": 1})
    first = describe_model(str(folder))
    assert first.kind == "tuned" and first.problem is None
    assert first.identity["base"] == describe_model("embedded").identity
    again = describe_model(str(folder))
    assert again.identity == first.identity and again.label == first.label
    # One byte of one fold's weights: another identity, another label (and so another configuration).
    weights = folder / "fold-1" / "adapter_model.safetensors"
    weights.write_bytes(weights.read_bytes() + b"!")
    changed = describe_model(str(folder))
    assert changed.identity != first.identity and changed.label != first.label
    # The fold assignment is part of it too.
    tuned.write_folds(folder, [{"key": "k1", "fold": 1}, {"key": "k2", "fold": 0}])
    assert describe_model(str(folder)).identity != changed.identity


def test_a_missing_adapter_or_another_base_model_is_refused_with_the_reason(tuned_dir: Path) -> None:
    from scoring.metrics.base import MetricUnavailable
    from scoring.metrics.lm import check_model_available

    folder = write_bundle(tuned_dir / "j", base_spec="embedded", base_name="smollm2", folds={"k1": 0, "k2": 1})
    (folder / "fold-0" / "adapter_model.safetensors").unlink()
    source = describe_model(str(folder))
    with pytest.raises(MetricUnavailable, match=r"fold-0/adapter_model\.safetensors is missing"):
        check_model_available(source)
    other = write_bundle(tuned_dir / "k", base_spec="embedded", base_name="smollm2")
    manifest = json.loads((other / "judge.json").read_text())
    manifest["base"]["identity"]["version"] = "0.0.0"
    (other / "judge.json").write_text(json.dumps(manifest))
    with pytest.raises(MetricUnavailable, match="is not the one it was tuned on"):
        check_model_available(describe_model(str(other)))


@pytest.mark.django_db
def test_a_tuning_starts_only_from_a_judge_of_the_same_shape_that_never_saw_the_campaigns_pairs(
    tuned_dir: Path,
) -> None:
    campaign = _gold_campaign(4, 4)
    keys = [pair.key for pair in judge_tuning.labelled_pairs(campaign, "gold").pairs]
    shape = TuningOptions().identity()

    def bundle(name: str, **changes: object) -> None:
        folds = changes.pop("folds", None)
        settings = {**shape, **changes}
        write_bundle(
            tuned_dir / name, base_spec="embedded", base_name="smollm2", name=name, settings=settings, folds=folds
        )  # type: ignore[arg-type]

    bundle("smollm2-tuned-aaaaaaaa")
    bundle("smollm2-tuned-bbbbbbbb", folds={keys[0]: 0, keys[5]: 1})  # tuned on two of the campaign's pairs
    bundle("smollm2-tuned-cccccccc", rank=8, targets=["q_proj", "v_proj"])

    def ask(name: str) -> TunedJudge:
        options = judge_tuning.default_options(folds=2, start_from=name)
        return judge_tuning.request(campaign, reference="gold", options=options)

    refusals = {
        "nope": "no tuned judge 'nope' to start from; those tuned from smollm2 are: smollm2-tuned-aaaaaaaa, "
        "smollm2-tuned-bbbbbbbb, smollm2-tuned-cccccccc",
        "smollm2-tuned-bbbbbbbb": "cannot start from smollm2-tuned-bbbbbbbb: it was trained on 2 of the labelled "
        f"pairs of campaign '{campaign.slug}', so every fold would start from an adapter that saw them",
        "smollm2-tuned-cccccccc": "cannot start from smollm2-tuned-cccccccc: its adapters have another shape (rank 16 "
        "here, 8 in smollm2-tuned-cccccccc; targets down_proj,gate_proj,k_proj,o_proj,q_proj,up_proj,v_proj here, "
        "q_proj,v_proj in smollm2-tuned-cccccccc)",
    }
    for name, message in refusals.items():
        with pytest.raises(judge_tuning.TuningRequestError) as refused:
            ask(name)
        assert str(refused.value).startswith(message)
    assert TunedJudge.objects.count() == 0
    row = ask("smollm2-tuned-aaaaaaaa")
    assert row.options["start_from"] == "smollm2-tuned-aaaaaaaa"
    assert judge_tuning.start_folder(row) == tuned_dir / "smollm2-tuned-aaaaaaaa"
    # A judge tuned from scratch keeps the identity it had before the option existed.
    assert "start_from" not in judge_tuning.default_options().identity()
    # The dashboard says where it started.
    row.status, row.folds = TunedJudge.Status.DONE, {"1": 0, "2": 1}
    row.save()
    (note,) = judge_tuning.dashboard_notes(campaign)
    assert note.text.endswith(
        "not fitted on the pairs they are measured on. It started from smollm2-tuned-aaaaaaaa, a judge tuned on "
        "other pairs."
    )


# --- The dashboard says so ------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_dashboard_says_a_judge_tuned_on_the_campaign_is_cross_fitted(tuned_dir: Path) -> None:
    campaign = _gold_campaign(3, 3)
    config = MetricConfig.objects.create(
        metric="parapluie_direct",
        config_hash="h" * 64,
        label="parapluie_direct[SmolLM2-135M-tuned-1a2b3c4d]",
        queue="llm.smollm2-tuned-1a2b3c4d",
    )
    pair_ids = list(campaign.pairs.values_list("id", flat=True))
    TunedJudge.objects.create(
        campaign=campaign,
        reference="gold",
        base_judge="smollm2",
        template="direct",
        options={"folds": 3},
        status="done",
        name="smollm2-tuned-1a2b3c4d",
        label="SmolLM2-135M-tuned-1a2b3c4d",
        folds={str(pk): index % 3 for index, pk in enumerate(pair_ids)},
        metric_config=config,
    )
    TunedJudge.objects.create(
        campaign=campaign,
        base_judge="smollm2",
        template="direct",
        options={"folds": 5},
        status="running",
        progress={"adapter": "fold-1", "adapter_index": 2, "adapters": 6, "step": 4, "steps": 9}
        | {"validation_auc": 0.8125},
    )
    staff = make_staff()
    client = Client()
    client.force_login(staff)
    page = client.get(reverse("staff:dashboard"), {"campaign": campaign.slug}).content.decode()
    assert (
        "parapluie_direct[SmolLM2-135M-tuned-1a2b3c4d] was tuned on this campaign&#x27;s own labels (6 pairs, gold "
        "labels): its scores here are cross-fitted over 3 folds, each pair scored by an adapter that never saw it"
    ) in page
    assert (
        "Tuning smollm2 on this campaign&#x27;s labels is running: adapter fold-1 (3 of 6), step 4 of 9, "
        "validation AUC 0.812."
    ) in page
    other = make_campaign()
    elsewhere = client.get(reverse("staff:dashboard"), {"campaign": other.slug}).content.decode()
    assert 'id="tuned-judges"' not in elsewhere


# --- Training for real, on the tiny random Mistral (seconds) ---------------------------------------


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.judge_models import save_tiny_mistral

    return save_tiny_mistral(tmp_path_factory.mktemp("tiny") / "tiny-mistral")


def _demo_pairs(count: int) -> list[LabelledPair]:
    from annotate.importers.demo import DEMO_FILE

    records = [json.loads(line) for line in DEMO_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    usable = [record for record in records if "gold_label" in record][:count]
    return [LabelledPair(r["source"], r["hypothesis"], bool(r["gold_label"]), i) for i, r in enumerate(usable)]


@pytest.mark.model
def test_tuning_writes_a_bundle_whose_folds_never_score_their_own_pairs(
    tiny_base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scoring.metrics import judge_training
    from scoring.metrics.judge_training import tune
    from scoring.metrics.lm import load_fresh
    from scoring.metrics.parapluie import ParaPluie
    from scoring.metrics.templates import get_template

    learnt = record_learnt(monkeypatch)
    pairs = _demo_pairs(16)
    options = TuningOptions(folds=2, batch_size=4, eval_every=2, learning_rate=5e-3, seed=3, rank=4)
    events = []
    lm = load_fresh(str(tiny_base))
    template = get_template("direct", [])
    result = tune(
        lm,
        pairs,
        options,
        template,
        tmp_path,
        base_spec=str(tiny_base),
        base_name="tiny",
        progress=events.append,
    )
    assert result.folder == tmp_path / result.name and result.name.startswith("tiny-tuned-")
    assert sorted(path.name for path in result.folder.iterdir()) == [
        "fold-0",
        "fold-1",
        "folds.json",
        "full",
        "judge.json",
        "trained.json",
        "training.json",
    ]
    assert not list(tmp_path.glob(".tuning-*"))
    assert next(event.event for event in events if event.adapter == "full") == "start"
    assert any(event.validation_auc is not None for event in events if event.event == "eval")
    # The fold assignment on disk: each fold adapter learnt (train + validation) from the other folds only.
    folds = tuned.read_folds(result.folder)
    assert folds == result.folds and len(folds) == 16
    for adapter in result.adapters[1:]:
        fold = int(adapter.adapter.removeprefix("fold-"))
        assert adapter.train_pairs + adapter.validation_pairs == sum(1 for f in folds.values() if f != fold)
    prompt = {pair.key: tuple(judge_training.prompt_ids(lm, template, pair)) for pair in pairs}
    assert len(set(prompt.values())) == 16
    assert learnt["full"] == set(prompt.values())
    for fold in (0, 1):
        assert learnt[f"fold-{fold}"] == {prompt[key] for key, f in folds.items() if f != fold}, fold
    # Scoring: a training pair gets its fold adapter's score, another pair the full adapter's.
    metric = ParaPluie("direct", model=str(result.folder), batch_size=4, allow_download=False, template_dirs=[])
    assert metric.label == f"parapluie_direct[{result.label}]"
    unseen = ("A sentence nobody trained on.", "Nobody trained on this sentence.")
    scores = metric.score_batch([(p.source, p.hypothesis) for p in pairs] + [unseen])
    for pair, score in zip(pairs, scores, strict=False):
        own = f"fold-{folds[pair.key]}"
        other = f"fold-{1 - folds[pair.key]}"
        assert score == pytest.approx(metric.score_with_adapter([(pair.source, pair.hypothesis)], own)[0], abs=1e-5)
        assert score != pytest.approx(metric.score_with_adapter([(pair.source, pair.hypothesis)], other)[0], abs=1e-5)
    assert scores[-1] == pytest.approx(metric.score_with_adapter([unseen], "full")[0], abs=1e-5)
    # The fast path equals the two-pass formula with the adapters applied.
    reference = metric.reference_scores([(p.source, p.hypothesis) for p in pairs] + [unseen])
    assert max(abs(a - b) for a, b in zip(scores, reference, strict=True)) < 1e-4


@pytest.mark.model
def test_the_same_data_and_seed_give_the_same_judge_and_another_seed_another(tiny_base: Path, tmp_path: Path) -> None:
    from scoring.metrics.judge_training import tune
    from scoring.metrics.lm import load_fresh
    from scoring.metrics.templates import get_template

    pairs = _demo_pairs(12)
    random.Random(0).shuffle(pairs)

    def run(seed: int) -> str:
        options = TuningOptions(batch_size=4, eval_every=2, seed=seed, rank=2)
        lm = load_fresh(str(tiny_base))
        template = get_template("direct", [])
        return tune(lm, pairs, options, template, tmp_path, base_spec=str(tiny_base), base_name="tiny").name

    first = run(1)
    assert run(1) == first
    assert run(2) != first


@pytest.mark.model
def test_a_tuning_started_from_a_judge_begins_with_its_adapter_and_refuses_one_that_saw_its_pairs(
    tiny_base: Path, tmp_path: Path
) -> None:
    from dataclasses import replace

    import torch
    from safetensors.torch import load_file

    from scoring.metrics.judge_training import tune
    from scoring.metrics.lm import load_fresh
    from scoring.metrics.templates import get_template

    pairs = _demo_pairs(24)
    first, second = pairs[:12], pairs[12:]
    template = get_template("direct", [])

    def run(items: list[LabelledPair], options: TuningOptions, start: Path | None = None):
        lm = load_fresh(str(tiny_base))
        return tune(lm, items, options, template, tmp_path, base_spec=str(tiny_base), base_name="tiny", start=start)

    scratch = TuningOptions(batch_size=4, eval_every=2, seed=1, rank=2, learning_rate=5e-3)
    elsewhere = run(first, scratch)
    # A learning rate too small to move anything: every adapter must end where it started.
    options = replace(scratch, start_from=elsewhere.name, learning_rate=1e-9, folds=2)
    with pytest.raises(TuningError, match="it was trained on 12 of these pairs"):
        run(first, options, elsewhere.folder)
    with pytest.raises(TuningError, match="give both or neither"):
        run(second, options)
    result = run(second, options, elsewhere.folder)
    started = load_file(str(elsewhere.folder / "full" / "adapter_model.safetensors"))
    assert any(float(tensor.abs().max()) > 1e-3 for tensor in started.values())  # trained: not LoRA's zero start
    for adapter in ("full", "fold-0", "fold-1"):
        weights = load_file(str(result.folder / adapter / "adapter_model.safetensors"))
        assert weights.keys() == started.keys()
        assert all(torch.allclose(weights[key], started[key], atol=1e-6) for key in started), adapter
    assert tuned.read_manifest(result.folder).settings["start_from"] == elsewhere.name
    assert result.name != run(second, replace(options, start_from=""), None).name
